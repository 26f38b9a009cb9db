"""The core's pages: cases, memberships, access requests, the audit log (and, until
accounts has its own, sign-in). Included by ``athar/urls.py``; names no app above it."""

from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_not_required
from django.urls import include, path
from django.views.i18n import JavaScriptCatalog, set_language
from django_otp_webauthn import views as webauthn_views

from . import access_views, accounts, converters, views, webauthn  # noqa: F401

app_patterns = (
    [
        path("cases/", views.case_list, name="case_list"),
        path("cases/<text:ref>/", views.case_detail, name="case_detail"),
        path(
            "cases/<text:ref>/audit/<text:target_type>/<text:target_id>/",
            views.case_target_audit,
            name="case_target_audit",
        ),
        path("audit/", views.audit_list, name="audit_list"),
        path("audit/export.csv", views.audit_export, {"fmt": "csv"}, name="audit_export_csv"),
        path("audit/export.jsonl", views.audit_export, {"fmt": "jsonl"}, name="audit_export_jsonl"),
    ],
    "casefiles",
)

# django-otp-webauthn's URL names, with authentication taken over by casefiles.webauthn
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
    path("", views.home, name="home"),
    path("accounts/login/", accounts.SignInView.as_view(), name="login"),
    path("accounts/login/verify/", accounts.login_verify, name="login_verify"),
    path("accounts/recover/", accounts.recover, name="recover"),
    path("accounts/recover/password/", accounts.recover_password, name="recover_password"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("webauthn/", include(webauthn_patterns)),
    path("accounts/security/", accounts.security, name="security"),
    path(
        "accounts/security/sign-out-everywhere/",
        accounts.sign_out_everywhere,
        name="sign_out_everywhere",
    ),
    path("accounts/security/backup-codes/", accounts.renew_backup_codes, name="backup_codes"),
    # The language switch works before sign-in too (the login page offers it).
    path("i18n/setlang/", login_not_required(set_language), name="set_language"),
    # One sign-in page for everyone: the admin's own login form is not offered.
    path("admin/login/", accounts.admin_login),
    path("access/request/", access_views.request_access, name="request_access"),
    path("access/requests/", access_views.access_request_list, name="access_requests"),
    path(
        "access/requests/<int:pk>/",
        access_views.access_request_decide,
        name="access_request_decide",
    ),
    path(
        "access/memberships/<int:pk>/revoke/",
        access_views.membership_revoke,
        name="membership_revoke",
    ),
    path("manage/users/", access_views.user_list, name="manage_users"),
    path("manage/users/<int:pk>/", access_views.user_detail, name="manage_user"),
    path(
        "manage/users/<int:pk>/<slug:action>/",
        access_views.user_action,
        name="manage_user_action",
    ),
    path("manage/expiring/", access_views.expiring_memberships, name="manage_expiring"),
    path("manage/cases/", access_views.manage_case_list, name="manage_cases"),
    path("manage/cases/new/", access_views.case_create, name="case_create"),
    path("cases/<text:ref>/members/", access_views.case_members, name="case_members"),
    path(
        "cases/<text:ref>/members/<int:membership_id>/",
        access_views.membership_change,
        name="membership_change",
    ),
    path(
        "access/grants/<int:pk>/<slug:decision>/",
        access_views.grant_decide,
        name="grant_decide",
    ),
    path("", include(app_patterns)),
]
