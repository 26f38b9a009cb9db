"""The core's pages: cases, memberships, access requests, the audit log. Included by
``athar/urls.py``; names no app above it."""

from django.contrib.auth.decorators import login_not_required
from django.urls import include, path
from django.views.i18n import set_language

from . import access_views, converters, key_views, views  # noqa: F401  (converters: "text")

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

urlpatterns = [
    path("", views.home, name="home"),
    # The language switch works before sign-in too (the login page offers it).
    path("i18n/setlang/", login_not_required(set_language), name="set_language"),
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
    path("keys/", key_views.signing_keys, name="signing_keys"),
    # Public: a verifier fetches the keys to trust from here, not from a package.
    path(key_views.WELL_KNOWN_PATH, key_views.signing_keys_well_known, name="signing_keys_json"),
    path("", include(app_patterns)),
]
