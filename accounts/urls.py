"""Sign-in, second factors, recovery, the user's own security page, and the admins'
pages about users. Included by ``athar/urls.py`` before the Django admin (it takes over
the admin's sign-in page)."""

from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_not_required
from django.urls import include, path
from django.views.i18n import JavaScriptCatalog
from django_otp_webauthn import views as webauthn_views

from . import signin, user_pages, webauthn

# django-otp-webauthn's URL names, with authentication taken over by accounts.webauthn
# (a second factor after the password step, never a sign-in by the key alone).
webauthn_patterns = (
    [
        path(
            "registration/begin/",
            webauthn_views.BeginCredentialRegistrationView.as_view(),
            name="credential-registration-begin",
        ),
        path(
            "registration/complete/",
            webauthn.CompleteRegistrationView.as_view(),
            name="credential-registration-complete",
        ),
        path(
            "authentication/begin/",
            webauthn.BeginSecondFactorView.as_view(),
            name="credential-authentication-begin",
        ),
        path(
            "authentication/complete/",
            webauthn.CompleteSecondFactorView.as_view(),
            name="credential-authentication-complete",
        ),
        # The script's messages, needed on the second step before sign-in.
        path(
            "jsi18n/",
            login_not_required(JavaScriptCatalog.as_view(packages=["django_otp_webauthn"])),
            name="js-i18n-catalog",
        ),
    ],
    "otp_webauthn",
)

urlpatterns = [
    path("accounts/login/", signin.SignInView.as_view(), name="login"),
    path("accounts/login/verify/", signin.login_verify, name="login_verify"),
    path("accounts/recover/", signin.recover, name="recover"),
    path("accounts/recover/password/", signin.recover_password, name="recover_password"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("webauthn/", include(webauthn_patterns)),
    path("accounts/security/", signin.security, name="security"),
    path(
        "accounts/security/sign-out-everywhere/",
        signin.sign_out_everywhere,
        name="sign_out_everywhere",
    ),
    path("accounts/security/backup-codes/", signin.renew_backup_codes, name="backup_codes"),
    path("accounts/security/choices/", user_pages.own_preferences, name="own_preferences"),
    # One sign-in page for everyone: the admin's own login form is not offered.
    path("admin/login/", signin.admin_login),
    path("manage/users/", user_pages.user_list, name="manage_users"),
    path("manage/users/<int:pk>/", user_pages.user_detail, name="manage_user"),
    path(
        "manage/users/<int:pk>/<slug:action>/",
        user_pages.user_action,
        name="manage_user_action",
    ),
]
