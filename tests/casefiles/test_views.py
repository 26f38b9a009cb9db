from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from casefiles import services
from casefiles.access import Role
from casefiles.models import AuditEntry, Membership
from tests.factories import (
    TEST_PASSWORD,
    CaseFactory,
    MembershipFactory,
    totp_code,
    totp_device,
)
from tests.html import has_text, shows

pytestmark = pytest.mark.django_db


def test_signing_in_and_out_is_audited(client, cast):
    device = totp_device(cast.lawyer)
    meta = {"REMOTE_ADDR": "203.0.113.9", "HTTP_USER_AGENT": "Firefox/140"}
    client.post(reverse("login"), {"username": "lawyer", "password": TEST_PASSWORD}, **meta)
    response = client.post(reverse("login_verify"), {"code": totp_code(device)}, **meta)
    assert response.status_code == 302
    assert response["Location"] == reverse("home")  # which sends a member on to their cases
    client.post(reverse("logout"))
    password, login, logout = AuditEntry.objects.order_by("seq")
    assert (password.action, password.actor, password.target_label) == (
        "auth.password_ok",
        None,
        "lawyer",
    )
    assert (login.action, login.actor, login.ip, login.user_agent) == (
        "auth.login",
        cast.lawyer,
        "203.0.113.9",
        "Firefox/140",
    )
    assert (logout.action, logout.actor) == ("auth.logout", cast.lawyer)


def test_a_failed_sign_in_is_audited_and_keeps_the_username(client, cast):
    response = client.post(reverse("login"), {"username": "lawyer", "password": "wrong"})
    assert response.status_code == 200
    assert b'value="lawyer"' in response.content  # what was typed is kept
    entry = AuditEntry.objects.get()
    assert entry.action == "auth.login_failed"
    assert entry.actor is None
    assert entry.details == {"username": "lawyer"}
    assert "wrong" not in str(entry.details)


def test_my_cases_lists_exactly_the_users_cases_with_their_role(client, cast, other_case):
    CaseFactory(reference="XYZ-0001", title="Someone else's case")
    MembershipFactory(user=cast.lawyer, case=other_case, role=Role.LAWYER)
    client.force_login(cast.lawyer)
    response = client.get(reverse("casefiles:case_list"))
    html = response.content.decode()
    assert [c.reference for c in response.context["cases"]] == ["SYR-2013-007", "SYR-2014-001"]
    assert "XYZ-0001" not in html
    assert "Lawyer" in html


def test_my_cases_costs_the_same_queries_for_many_cases(client, cast, django_assert_num_queries):
    client.force_login(cast.observer)
    client.get(reverse("casefiles:case_list"))  # warm the session
    # session, user, the session's second-factor device, the header's admin and lead
    # checks, the cases
    with django_assert_num_queries(6) as one:
        client.get(reverse("casefiles:case_list"))
    for _ in range(15):
        MembershipFactory(user=cast.observer, role=Role.OBSERVER)
    with django_assert_num_queries(len(one.captured_queries)):
        response = client.get(reverse("casefiles:case_list"))
    assert len(response.context["cases"]) == 16


def test_viewing_a_case_shows_summary_and_members_and_is_audited(client, cast):
    expired = MembershipFactory(case=cast.case, role=Role.OBSERVER)
    Membership.objects.filter(pk=expired.pk).update(expires_at=timezone.now() - timedelta(days=1))
    client.force_login(cast.lawyer)
    response = client.get(cast.case.get_absolute_url())
    assert response.status_code == 200
    html = response.content.decode()
    assert has_text(html, cast.case.summary)
    for member in (cast.lead, cast.investigator, cast.observer):
        assert has_text(html, member.get_full_name())
    assert not shows(html, expired.user.get_full_name())
    entry = AuditEntry.objects.get(action="case.view")
    assert (entry.actor, entry.case) == (cast.lawyer, cast.case)
    assert "no-store" in response["Cache-Control"]


def test_revocation_takes_effect_at_the_next_request(client, cast):
    client.force_login(cast.investigator)
    assert client.get(cast.case.get_absolute_url()).status_code == 200
    services.revoke_membership(
        actor=cast.admin, membership=Membership.objects.get(user=cast.investigator)
    )
    assert client.get(cast.case.get_absolute_url()).status_code == 404
    assert cast.case.reference not in client.get(reverse("casefiles:case_list")).content.decode()


def test_the_audit_page_is_for_admins_only(client, cast):
    client.force_login(cast.lead)
    assert client.get(reverse("casefiles:audit_list")).status_code == 403
    client.force_login(cast.admin)
    assert client.get(reverse("casefiles:audit_list")).status_code == 200


def test_admins_filter_the_audit_log(client, cast, other_case):
    services.grant_membership(actor=cast.admin, case=other_case, user=cast.lawyer, role=Role.LAWYER)
    client.force_login(cast.lawyer)
    client.get(cast.case.get_absolute_url())
    client.get(other_case.get_absolute_url())
    client.force_login(cast.admin)
    url = reverse("casefiles:audit_list")

    def rows(**params):
        response = client.get(url, params)
        assert response.status_code == 200
        return [(e.action, e.case_id) for e in response.context["page"]]

    assert rows(actor=cast.lawyer.pk, action="case.view") == [
        ("case.view", other_case.pk),
        ("case.view", cast.case.pk),
    ]
    assert rows(action="case.view", case=cast.case.pk) == [("case.view", cast.case.pk)]
    assert rows(action="membership.grant") == [("membership.grant", other_case.pk)]
    today = timezone.now().date()
    assert len(rows(at_after=today, at_before=today, action="case.view")) == 2
    yesterday = today - timedelta(days=1)
    assert rows(at_after=yesterday, at_before=yesterday) == []
    # Reading the log leaves a trace too.
    assert AuditEntry.objects.filter(action="audit.view", actor=cast.admin).count() == 5


def _brand(html: str) -> str:
    return html.split('class="brand"', 1)[1].split("</a>", 1)[0]


def test_arabic_pages_are_right_to_left_and_translated(client, cast):
    assert "Athar" in _brand(client.get(reverse("login")).content.decode())
    client.post(reverse("set_language"), {"language": "ar", "next": "/"})
    response = client.get(reverse("login"))
    html = response.content.decode()
    assert '<html lang="ar" dir="rtl">' in html
    assert _brand(html).count("أثر") == 1  # the name, not the name and its translation
    assert "تسجيل الدخول" in html
    client.force_login(cast.lawyer)
    html = client.get(reverse("casefiles:case_list")).content.decode()
    assert 'dir="rtl"' in html and "قضاياي" in html


def test_pages_load_nothing_from_other_origins(client, cast):
    client.force_login(cast.lead)
    for url in (reverse("login"), reverse("casefiles:case_list"), cast.case.get_absolute_url()):
        response = client.get(url)
        html = response.content.decode()
        assert "default-src 'self'" in response["Content-Security-Policy"]
        for attr in ("src=", "href=", "action="):
            for value in html.split(attr)[1:]:
                assert not value.strip("\"'").startswith(("http:", "https:", "//")), (url, value)


def test_a_name_that_is_no_account_is_kept_only_as_a_keyed_digest(client, cast):
    client.post(reverse("login"), {"username": "my-secret-passw0rd", "password": "x"})
    client.post(reverse("login"), {"username": "my-secret-passw0rd", "password": "y"})
    first, second = AuditEntry.objects.filter(action="auth.login_failed").order_by("seq")
    assert "my-secret-passw0rd" not in str(first.details)
    assert first.details == second.details  # the same name, recognisable as such
    assert len(first.details["unknown_username_hmac"]) == 32
