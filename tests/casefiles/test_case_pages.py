"""Opening a case and granting access in the app's own pages, not the Django admin."""

import pytest
from django.urls import reverse

from casefiles import access
from casefiles.access import ADMIN_GROUP, INVESTIGATOR_GROUP, Role, role_in
from casefiles.models import AuditEntry, Case, GrantRequest
from tests.factories import UserFactory
from tests.html import has_text, shows

pytestmark = pytest.mark.django_db


def test_an_admin_opens_a_case_in_the_app_and_a_bad_reference_keeps_what_was_typed(client, cast):
    client.force_login(cast.admin)
    url = reverse("case_create")
    assert client.get(url).status_code == 200
    form = {
        "reference": "bad ref!",
        "title": "Testimony of the branch",
        "status": "open",
        "sensitivity": "confidential",
    }
    refused = client.post(url, form)
    assert refused.status_code == 200
    assert "Testimony of the branch" in refused.content.decode()
    assert not Case.objects.filter(title="Testimony of the branch").exists()

    response = client.post(url, {**form, "reference": "syr-2015-003"})
    assert response.status_code == 302
    case = Case.objects.get(reference="SYR-2015-003")
    assert response.url == reverse("case_members", args=[case.reference])
    assert AuditEntry.objects.filter(action="case.create", case=case, actor=cast.admin).exists()
    listed = client.get(reverse("manage_cases")).content.decode()
    assert "SYR-2015-003" in listed


def test_only_admins_open_cases(client, cast):
    client.force_login(cast.lead)
    assert client.get(reverse("case_create")).status_code == 403
    assert client.get(reverse("manage_cases")).status_code == 403


def test_the_lead_grants_access_on_the_members_page(client, cast):
    colleague = UserFactory(username="colleague", groups=[INVESTIGATOR_GROUP])
    client.force_login(cast.lead)
    page = client.get(cast.case.get_absolute_url()).content.decode()
    url = reverse("case_members", args=[cast.case.reference])
    assert url in page
    response = client.post(url, {"username": "colleague", "role": Role.INVESTIGATOR})
    assert response.status_code == 302
    assert role_in(colleague, cast.case) == Role.INVESTIGATOR
    # An unknown name is a form error, and nothing typed is lost.
    again = client.post(url, {"username": "nobody", "role": "observer", "note": "kept"})
    assert again.status_code == 200
    assert "No active account has this username." in again.content.decode()
    assert "kept" in again.content.decode()


def test_members_of_other_roles_and_outsiders_get_404(client, cast):
    url = reverse("case_members", args=[cast.case.reference])
    for user in (cast.investigator, cast.observer, cast.outsider):
        client.force_login(user)
        assert client.get(url).status_code == 404
        assert client.post(url, {"username": "outsider", "role": "observer"}).status_code == 404


def test_an_admins_grant_waits_on_the_page_and_another_admin_approves_it(client, cast):
    second = UserFactory(username="admin2", groups=[ADMIN_GROUP], is_staff=True)
    client.force_login(cast.admin)
    url = reverse("case_members", args=[cast.case.reference])
    page = client.get(url).content.decode()
    assert cast.case.summary not in page  # access, not content
    response = client.post(url, {"username": "outsider", "role": "investigator"}, follow=True)
    assert "needs a second person" in response.content.decode()
    assert "Waiting for a second person" in response.content.decode()
    assert role_in(cast.outsider, cast.case) is None
    pending = GrantRequest.objects.get(user=cast.outsider)

    client.force_login(second)
    listed = client.get(reverse("access_requests")).content.decode()
    assert reverse("grant_decide", args=[pending.pk, "approve"]) in listed
    client.post(reverse("grant_decide", args=[pending.pk, "approve"]))
    assert role_in(cast.outsider, cast.case) == Role.INVESTIGATOR


def test_the_lead_changes_a_role_on_the_membership_page(client, cast):
    from casefiles.models import Membership

    m = Membership.objects.get(user=cast.observer)
    client.force_login(cast.lead)
    url = reverse("membership_change", args=[cast.case.reference, m.pk])
    assert client.get(url).status_code == 200
    assert client.post(url, {"role": "lawyer"}).status_code == 200  # needs the Lawyer group
    assert role_in(cast.observer, cast.case) == Role.OBSERVER
    response = client.post(url, {"role": "observer", "expires_on": "2099-01-31"})
    assert response.status_code == 302
    m.refresh_from_db()
    assert m.expires_at.year == 2099


def test_the_new_pages_speak_arabic(client, cast):
    client.force_login(cast.admin)
    client.post(reverse("set_language"), {"language": "ar", "next": "/"})
    for url in (
        reverse("manage_cases"),
        reverse("case_create"),
        reverse("case_members", args=[cast.case.reference]),
    ):
        page = client.get(url).content.decode()
        assert 'dir="rtl"' in page
        assert "Grant access" not in page and "Open a new case" not in page


def test_approving_a_request_on_its_page_says_it_waits_for_another_admin(client, cast):
    from casefiles import services

    UserFactory(username="admin2", groups=[ADMIN_GROUP], is_staff=True)
    req = services.request_access(user=cast.outsider, case=cast.case, reason="I document it")
    client.force_login(cast.admin)
    response = client.post(
        reverse("access_request_decide", args=[req.pk]),
        {"role": "investigator", "approve": "1"},
        follow=True,
    )
    assert "needs a second person" in response.content.decode()
    assert role_in(cast.outsider, cast.case) is None
    assert GrantRequest.objects.filter(access_request=req).exists()


def test_every_member_reads_who_else_has_access_on_the_case_page(client, cast, monkeypatch):
    """Reading the members is ``Action.VIEW_MEMBERS``, every role's; managing them (the
    members page) is the lead's and the admins'."""
    for user in (cast.lead, cast.investigator, cast.lawyer, cast.observer):
        client.force_login(user)
        page = client.get(cast.case.get_absolute_url())
        assert has_text(page, "Members") and has_text(page, cast.lawyer.get_full_name()), user
    # The page asks the policy, not the role: a matrix without the right lists no one.
    observer = access.ROLE_ACTIONS[Role.OBSERVER] - {access.Action.VIEW_MEMBERS}
    monkeypatch.setitem(access.ROLE_ACTIONS, Role.OBSERVER, observer)
    client.force_login(cast.observer)
    page = client.get(cast.case.get_absolute_url())
    assert has_text(page, cast.case.summary) and not shows(page, cast.lawyer.get_full_name())


def test_a_cases_details_are_changed_in_the_django_admin_by_an_admin_only(client, cast):
    """No case role edits a case's title, status or sensitivity: the Admin group does, in
    the Django admin, audited; a lead is sent to the admin's sign-in and changes nothing."""
    Case.objects.filter(pk=cast.case.pk).update(created_by=cast.admin)  # as opened in the app
    url = reverse("admin:casefiles_case_change", args=[cast.case.pk])
    form = {
        "title": "Renamed",
        "status": cast.case.status,
        "sensitivity": cast.case.sensitivity,
        "jurisdiction": "",
    }
    client.force_login(cast.lead)
    refused = client.post(url, form)
    assert refused.status_code == 302 and reverse("admin:login") in refused["Location"]
    cast.case.refresh_from_db()
    assert cast.case.title != "Renamed"
    client.force_login(cast.admin)
    assert client.post(url, form).status_code == 302
    cast.case.refresh_from_db()
    assert cast.case.title == "Renamed"
    entry = AuditEntry.objects.get(action="case.update")
    assert entry.actor == cast.admin and entry.details["changes"]["title"][1] == "Renamed"


def test_an_admin_opens_a_case_in_the_django_admin_too_audited(client, cast):
    client.force_login(cast.admin)
    form = {"reference": "SYR-2016-004", "title": "Checkpoint", "status": "open"}
    form |= {"sensitivity": "confidential", "jurisdiction": ""}
    response = client.post(reverse("admin:casefiles_case_add"), form)
    assert response.status_code == 302, response.content.decode()[:2000]
    case = Case.objects.get(reference="SYR-2016-004")
    assert (case.title, case.created_by) == ("Checkpoint", cast.admin)
    assert AuditEntry.objects.filter(action="case.create", case=case, actor=cast.admin).exists()
