from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_not_required
from django.urls import include, path
from django.views.generic import RedirectView
from django.views.i18n import set_language

from . import views

app_patterns = (
    [
        path("cases/", views.case_list, name="case_list"),
        path("cases/<str:ref>/", views.case_detail, name="case_detail"),
        path("audit/", views.audit_list, name="audit_list"),
    ],
    "casefiles",
)

urlpatterns = [
    path("", views.home, name="home"),
    path(
        "accounts/login/",
        auth_views.LoginView.as_view(redirect_authenticated_user=True),
        name="login",
    ),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    # The language switch works before sign-in too (the login page offers it).
    path("i18n/setlang/", login_not_required(set_language), name="set_language"),
    # One sign-in page for everyone: the admin's own login form is not offered.
    path(
        "admin/login/",
        login_not_required(RedirectView.as_view(pattern_name="login", query_string=True)),
    ),
    path("admin/", admin.site.urls),
    path("", include(app_patterns)),
    path("", include("people.urls")),
]

handler404 = "django.views.defaults.page_not_found"
