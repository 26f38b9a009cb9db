"""The start page of a system admin who is in no case, and the Django admin's answer to a
signed-in user without administration rights."""

from datetime import timedelta
from urllib.parse import parse_qs

import pytest
from django.urls import reverse
from django.utils import timezone

from accounts import services as account_services
from casefiles import services
from casefiles.access import ADMIN_GROUP, INVESTIGATOR_GROUP, Role
from casefiles.models import Membership
from tests.factories import CaseFactory, MembershipFactory, UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def waiting(cast, other_case):
    """One of each thing an admin has to see to: a request, a reset asked by another
    admin, a membership ending in three days, a checkpoint and a sweep of the store."""
    from evidence.services import run_fixity

    colleague = UserFactory(username="colleague", groups=[ADMIN_GROUP], is_staff=True)
    request = services.request_access(
        user=cast.outsider, case=other_case, reason="I interviewed the family in Gaziantep"
    )
    reset, _done = account_services.ask_second_factor_reset(
        actor=colleague, user=cast.lawyer, reason="lost phone at the border"
    )
    ending = Membership.objects.get(user=cast.observer)
    Membership.objects.filter(pk=ending.pk).update(expires_at=timezone.now() + timedelta(days=3))
    checkpoint, _proof = services.create_audit_checkpoint()
    sweep = run_fixity()
    # The colleague is not the lead of other_case: an investigator grant waits for a
    # second admin.
    services.grant_or_ask(
        actor=colleague, case=other_case, user=cast.investigator, role=Role.INVESTIGATOR
    )
    return request, reset, ending, checkpoint, sweep


def test_an_admin_in_no_case_sees_what_waits_for_them_with_a_link_to_each_page(
    client, cast, waiting
):
    request, reset, ending, checkpoint, sweep = waiting
    client.force_login(cast.admin)
    response = client.get(reverse("home"))
    assert response.status_code == 200
    html = response.content.decode()
    assert "not a member of any case" not in html
    assert "outsider" in html and "SYR-2013-007" in html  # who asks, for which case
    assert "I interviewed the family" not in html  # the reason is read where it is decided
    assert "lost phone" not in html
    assert "colleague" in html and "lawyer" in html
    grants = response.context["grants"]
    assert [(g.user, g.case.reference, g.role) for g in grants] == [
        (cast.investigator, "SYR-2013-007", Role.INVESTIGATOR)
    ]
    assert "Grants waiting for a second admin" in html
    ending.refresh_from_db()
    assert ending.expires_at.strftime("%Y-%m-%d %H:%M") in html and "observer" in html
    assert checkpoint.root in html
    assert checkpoint.created_at.strftime("%Y-%m-%d %H:%M") in html
    assert "0 files re-hashed, 0 changed, 0 missing" in html
    assert cast.case.summary not in html
    links = {
        reverse("access_request_decide", args=[request.pk]),
        reverse("access_requests"),
        reverse("manage_user", args=[reset.user_id]),
        reverse("manage_user", args=[cast.observer.pk]),
        reverse("manage_expiring"),
        reverse("casefiles:audit_list") + "?action=audit.checkpoint",
        reverse("casefiles:audit_list") + "?target_type=evidence.fixitycheck",
    }
    for link in links:
        assert f'href="{link}"' in html, link
        assert client.get(link).status_code == 200, link
    # The links to the log open it on the checkpoint and the sweep.
    entries = client.get(reverse("casefiles:audit_list"), {"action": "audit.checkpoint"})
    assert [e.target_id for e in entries.context["page"]] == [str(checkpoint.pk)]
    entries = client.get(reverse("casefiles:audit_list"), {"target_type": "evidence.fixitycheck"})
    assert [e.target_id for e in entries.context["page"]] == [str(sweep.pk)]


def test_the_admins_start_page_when_nothing_waits(client, cast):
    client.force_login(cast.admin)
    html = client.get(reverse("home")).content.decode()
    assert "No pending requests." in html
    assert "No reset is waiting." in html
    assert "No checkpoint has been signed yet" in html
    assert "No sweep of the whole store has been recorded yet" in html


def test_a_sweep_that_found_changed_files_is_shown_as_an_error(client, cast):
    from casefiles import audit

    audit.record(None, "evidence.fixity", files=40, changed=2, missing=1)
    client.force_login(cast.admin)
    html = client.get(reverse("home")).content.decode()
    assert '<p class="errors">' in html
    assert "40 files re-hashed, 2 changed, 1 missing" in html


def test_the_admins_start_page_in_arabic_is_right_to_left_and_translated(client, cast, waiting):
    client.force_login(cast.admin)
    client.post(reverse("set_language"), {"language": "ar", "next": "/"})
    html = client.get(reverse("home")).content.decode()
    assert '<html lang="ar" dir="rtl">' in html
    assert "ما ينتظرك" in html
    for english in ("What waits for you", "Second-factor resets", "Fixity sweep", "Decide"):
        assert english not in html, english


def test_members_and_admins_in_a_case_go_on_to_their_cases(client, cast):
    for user in (cast.lawyer, cast.outsider):
        client.force_login(user)
        assert client.get(reverse("home"))["Location"] == reverse("casefiles:case_list")
    MembershipFactory(user=cast.admin, case=CaseFactory(), role=Role.OBSERVER)
    client.force_login(cast.admin)
    assert client.get(reverse("home"))["Location"] == reverse("casefiles:case_list")


def test_signing_in_leads_an_admin_to_the_start_page(client, cast):
    client.force_login(cast.admin)
    response = client.get(reverse("login"), follow=True)  # already signed in
    assert response.redirect_chain[-1][0] == reverse("home")
    assert response.templates[0].name == "casefiles/admin_home.html"


def test_the_admins_start_page_costs_the_same_queries_however_much_waits(
    client, cast, waiting, django_assert_num_queries
):
    client.force_login(cast.admin)
    client.get(reverse("home"))  # warm the session
    # session, user, the session's second-factor device; is the user a system admin, in
    # any case; the header's admin check; the requests (with the admin check of
    # decidable_by), the resets, the expiring memberships (with manageable_by's check),
    # the grants waiting for a second admin, the checkpoint, the last sweep (with the
    # log's visible_to check)
    with django_assert_num_queries(15) as few:
        client.get(reverse("home"))
    for n in range(15):
        asker = UserFactory(groups=[INVESTIGATOR_GROUP])
        services.request_access(user=asker, case=cast.case, reason=f"reason {n}")
        account_services.ask_second_factor_reset(actor=cast.admin, user=asker, reason="lost phone")
        MembershipFactory(case=cast.case, expires_at=timezone.now() + timedelta(days=1))
        services.grant_or_ask(actor=cast.admin, case=cast.case, user=asker, role=Role.INVESTIGATOR)
    with django_assert_num_queries(len(few.captured_queries)):
        response = client.get(reverse("home"))
    assert len(response.context["requests"]) == 10 and response.context["more_requests"]
    assert len(response.context["resets"]) == 10 and response.context["more_resets"]
    assert len(response.context["expiring"]) == 10 and response.context["more_expiring"]
    assert len(response.context["grants"]) == 10 and response.context["more_grants"]


def test_the_django_admin_tells_a_signed_in_user_without_staff_rights_no(client, cast):
    client.force_login(cast.lawyer)
    response = client.get("/admin/", follow=True)  # a redirect loop raises here
    assert response.status_code == 403
    assert [url for url, _code in response.redirect_chain] == ["/admin/login/?next=/admin/"]
    assert "no administration rights" in response.content.decode()
    # An admin page deeper in answers the same way.
    response = client.get(reverse("admin:casefiles_case_changelist"), follow=True)
    assert response.status_code == 403


def test_the_django_admin_sends_a_visitor_to_the_one_sign_in_page(client, cast):
    response = client.get("/admin/", follow=True)
    assert response.status_code == 200
    url, query = response.redirect_chain[-1][0].split("?")
    assert url == reverse("login") and parse_qs(query) == {"next": ["/admin/"]}
    assert response.templates[0].name == "accounts/login.html"


def test_the_admins_sign_in_address_sends_staff_on_to_the_admin(client, cast):
    client.force_login(cast.admin)
    response = client.get("/admin/login/", {"next": "/admin/casefiles/case/"})
    assert response["Location"] == "/admin/casefiles/case/"
    assert client.get("/admin/login/")["Location"] == reverse("admin:index")
    assert client.get("/admin/login/", {"next": "https://elsewhere.example/"})[
        "Location"
    ] == reverse("home")
