"""The project's URLs: each app's own patterns, and the Django admin."""

from django.contrib import admin
from django.contrib.auth.decorators import login_not_required
from django.http import HttpRequest, HttpResponseRedirect
from django.templatetags.static import static
from django.urls import include, path

from casefiles import converters  # noqa: F401  (registers the "text" converter)


@login_not_required
def favicon(request: HttpRequest) -> HttpResponseRedirect:
    """Browsers ask for /favicon.ico whatever the page links: the static icon (a temporary
    redirect, since a production build names it by its hash)."""
    return HttpResponseRedirect(static("favicon.ico"))


urlpatterns = [
    path("favicon.ico", favicon, name="favicon"),
    # First: it takes over the admin's own sign-in page (admin/login/).
    path("", include("accounts.urls")),
    path("", include("casefiles.urls")),
    path("admin/", admin.site.urls),
    path("", include("evidence.urls")),
    path("", include("people.urls")),
    path("", include("legal.urls")),
    path("", include("search.urls")),
    path("", include("disclosure.urls")),
    path("", include("places.urls")),
    path("", include("incidents.urls")),
    path("", include("missing.urls")),
]

handler404 = "django.views.defaults.page_not_found"
