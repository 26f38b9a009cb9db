"""No one alone (decision 0022): with a single admin, no sequence of that admin's steps
reaches a critical witness's identity; with two, the second admin's approval (or the
case lead's consent) is the second person.

The sequences are an attack round's, walked through the pages an admin has: create an
account in the Django admin, issue its enrolment code, enrol it as that account, grant it
a role, then sign in as it and reveal a witness.
"""

import re

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.test import Client
from django.urls import reverse
from django_otp.plugins.otp_totp.models import TOTPDevice

from accounts import services as account_services
from casefiles.access import ADMIN_GROUP, INVESTIGATOR_GROUP, Role, role_in
from casefiles.models import AuditEntry, GrantRequest
from tests.conftest import VerifiedClient
from tests.factories import UserFactory, register_person, totp_code

pytestmark = pytest.mark.django_db

PASSWORD = "a long passphrase nobody else knows 42"
WITNESS = "فراس المصوّر"


def _signed_in_as(user) -> VerifiedClient:
    client = VerifiedClient()
    client.force_login(user)
    return client


def _puppet(admin_client, admin, username="puppet"):
    """An account the admin creates (choosing its password), issues the enrolment code
    of, and enrols with an authenticator of their own: the admin can be this account."""
    created = admin_client.post(
        reverse("admin:auth_user_add"),
        {"username": username, "password1": PASSWORD, "password2": PASSWORD},
    )
    assert created.status_code == 302
    puppet = get_user_model().objects.get(username=username)
    puppet.groups.add(Group.objects.get(name=INVESTIGATOR_GROUP))
    code, _expires = account_services.issue_enrolment_code(actor=admin, user=puppet)
    browser = Client()
    browser.post(reverse("login"), {"username": username, "password": PASSWORD})
    browser.post(reverse("login_verify"), {"code": code})
    browser.get(reverse("login_verify"))
    device = TOTPDevice.objects.get(user=puppet, confirmed=False)
    browser.post(reverse("login_verify"), {"code": totp_code(device)})
    assert TOTPDevice.objects.filter(user=puppet, confirmed=True).exists()  # enrolled
    return puppet


def _grant_on_page(client, case, username, role):
    return client.post(
        reverse("case_members", args=[case.reference]),
        {"username": username, "role": role},
        follow=True,
    )


def _reveal(user, case, person):
    url = reverse("people:person_reveal", args=[case.reference, person.code])
    return _signed_in_as(user).post(url, {"reason": "needed for the file"})


@pytest.fixture
def critical(cast):
    return register_person(cast.case, cast.lead, protection_level="critical", name_ar=WITNESS)


@pytest.fixture
def empty_case(db):
    """A case an admin opened: nobody in it yet, no lead to consent."""
    from tests.factories import CaseFactory

    return CaseFactory(reference="SYR-2015-003", title="A new case")


def test_the_only_admin_makes_a_puppet_lead_and_it_waits(cast, empty_case, critical):
    """The round's first sequence: create, enrol, grant Lead, reveal. The grant waits,
    the page says why and what to do, and the puppet reaches nothing."""
    admin = _signed_in_as(cast.admin)
    puppet = _puppet(admin, cast.admin)
    for case in (empty_case, cast.case):
        page = _grant_on_page(admin, case, "puppet", Role.LEAD).content.decode()
        assert "needs a second person" in page
        assert role_in(puppet, case) is None
    assert GrantRequest.objects.filter(user=puppet, outcome="pending").count() == 2
    assert not AuditEntry.objects.filter(action="membership.grant").exists()
    # The admin cannot approve their own ask, nor through the account they hold.
    for request in GrantRequest.objects.filter(user=puppet):
        for who in (cast.admin, puppet):
            _signed_in_as(who).post(reverse("grant_decide", args=[request.pk, "approve"]))
    assert role_in(puppet, cast.case) is None and role_in(puppet, empty_case) is None
    response = _reveal(puppet, cast.case, critical)
    assert response.status_code == 404
    assert WITNESS not in response.content.decode()


def test_with_no_lead_to_consent_the_page_says_add_a_second_admin(cast, empty_case):
    admin = _signed_in_as(cast.admin)
    UserFactory(username="newcomer", groups=[INVESTIGATOR_GROUP])
    page = _grant_on_page(admin, empty_case, "newcomer", Role.LEAD).content.decode()
    assert "Nobody can approve it yet" in page
    assert "Add a second admin" in page
    # Where the case has a lead, the lead can consent: no such warning.
    page = _grant_on_page(admin, cast.case, "newcomer", Role.INVESTIGATOR).content.decode()
    assert "needs a second person" in page and "Nobody can approve it yet" not in page


def test_with_two_admins_the_second_approves_and_the_lead_reveals(cast, empty_case, critical):
    """The same sequence in an installation of two admins: the second admin's approval
    is a second person's, and the grant is made as theirs."""
    second = UserFactory(username="admin2", groups=[ADMIN_GROUP], is_staff=True)
    admin = _signed_in_as(cast.admin)
    puppet = _puppet(admin, cast.admin)
    _grant_on_page(admin, empty_case, "puppet", Role.LEAD)
    request = GrantRequest.objects.get(user=puppet, case=empty_case)
    listed = _signed_in_as(second).get(reverse("access_requests")).content.decode()
    assert reverse("grant_decide", args=[request.pk, "approve"]) in listed
    _signed_in_as(second).post(reverse("grant_decide", args=[request.pk, "approve"]))
    assert role_in(puppet, empty_case) == Role.LEAD
    entry = AuditEntry.objects.get(action="membership.grant")
    assert (entry.actor, entry.details["asked_by"]) == (second, "admin")


def test_the_case_lead_consents_on_the_access_requests_page(cast):
    """With one admin, the lead of the case is the second person: they see the waiting
    grant and consent to it (or refuse it)."""
    admin = _signed_in_as(cast.admin)
    newcomer = UserFactory(username="newcomer", groups=[INVESTIGATOR_GROUP])
    _grant_on_page(admin, cast.case, "newcomer", Role.INVESTIGATOR)
    request = GrantRequest.objects.get(user=newcomer)
    lead = _signed_in_as(cast.lead)
    listed = lead.get(reverse("access_requests")).content.decode()
    assert "newcomer" in listed
    assert reverse("grant_decide", args=[request.pk, "approve"]) in listed
    lead.post(reverse("grant_decide", args=[request.pk, "approve"]))
    assert role_in(newcomer, cast.case) == Role.INVESTIGATOR
    entry = AuditEntry.objects.get(action="membership.grant")
    assert (entry.actor, entry.details["consent_of_lead"]) == (cast.lead, True)


def test_the_lead_cannot_consent_when_the_asking_admin_holds_the_leads_account(cast):
    """A lead whose own account the admin created is no second person to that admin."""
    account_services.issue_enrolment_code(actor=cast.admin, user=cast.lead)
    admin = _signed_in_as(cast.admin)
    newcomer = UserFactory(username="newcomer", groups=[INVESTIGATOR_GROUP])
    _grant_on_page(admin, cast.case, "newcomer", Role.INVESTIGATOR)
    request = GrantRequest.objects.get(user=newcomer)
    page = _signed_in_as(cast.lead).post(
        reverse("grant_decide", args=[request.pk, "approve"]), follow=True
    )
    assert "created, enrolled or recovered by admin" in page.content.decode()
    assert role_in(newcomer, cast.case) is None


def test_the_only_admin_recovers_the_leads_account_and_it_waits(cast, critical):
    """Another sequence: take over the lead's own account by a password recovery (the
    recovery code stands in for the password). With one admin it waits."""
    admin = _signed_in_as(cast.admin)
    url = reverse("manage_user_action", args=[cast.lead.pk, "reset-2fa"])
    page = admin.post(url, {"reason": "forgot the password", "password": "1"}, follow=True)
    assert not re.search(r"<code dir=\"ltr\">[A-Z0-9-]+</code>", page.content.decode())
    assert cast.lead.__class__.objects.get(pk=cast.lead.pk).has_usable_password()
    assert not AuditEntry.objects.filter(action="auth.password_recover_approve").exists()


def test_the_only_admin_cannot_give_a_held_account_observer_access_either(cast):
    """Another: the humblest role, for an account the admin made, still waits."""
    admin = _signed_in_as(cast.admin)
    puppet = _puppet(admin, cast.admin)
    page = _grant_on_page(admin, cast.case, "puppet", Role.OBSERVER).content.decode()
    assert "needs a second person" in page
    assert role_in(puppet, cast.case) is None
