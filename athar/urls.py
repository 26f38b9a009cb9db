"""The project's URLs: each app's own patterns, and the Django admin."""

from django.contrib import admin
from django.urls import include, path

from casefiles import converters  # noqa: F401  (registers the "text" converter)

urlpatterns = [
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
