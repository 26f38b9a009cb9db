"""No admin reaches a case alone: access for an account the admin created or enrolled,
and lead or investigator granted by an admin who is not the case's lead, wait for a
second admin (as second-factor resets do, and with their rule for a lone admin)."""

import re

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.exceptions import PermissionDenied, ValidationError
from django.test import Client
from django.urls import reverse
from django_otp.plugins.otp_totp.models import TOTPDevice

from accounts import services as account_services
from casefiles import services
from casefiles.access import ADMIN_GROUP, INVESTIGATOR_GROUP, LAWYER_GROUP, Role, role_in
from casefiles.models import AccessRequest, AuditEntry, GrantRequest, Membership
from people import services as people_services
from people.models import Identity
from tests.conftest import VerifiedClient
from tests.factories import UserFactory, totp_code

pytestmark = pytest.mark.django_db

NEW_PASSWORD = "a long passphrase nobody else knows 42"


@pytest.fixture
def second_admin(cast):
    return UserFactory(username="admin2", groups=[ADMIN_GROUP], is_staff=True)


def _in_force(user, case):
    return Membership.objects.active().filter(user=user, case=case).exists()


def test_one_admin_alone_cannot_make_an_account_and_bring_it_into_a_case(cast, second_admin):
    """The five steps of the attack, each in the admin's own tools, are refused at the
    grant: it waits for another admin, whom the asker cannot replace."""
    admin = VerifiedClient()
    admin.force_login(cast.admin)
    witness = people_services.register_person(
        actor=cast.lead,
        case=cast.case,
        role="witness",
        identity=Identity(name_ar="ليلى حسن"),
        protection_level="critical",
    )

    # 1. The admin creates an account in the Django admin, with a password they chose.
    response = admin.post(
        reverse("admin:auth_user_add"),
        {
            "username": "newcomer",
            "password1": NEW_PASSWORD,
            "password2": NEW_PASSWORD,
            "usable_password": "true",
        },
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    newcomer = get_user_model().objects.get(username="newcomer")

    # 2. Alone, they issue its first enrolment code (it has no access yet).
    page = admin.post(reverse("manage_user_action", args=[newcomer.pk, "enrolment-code"]))
    code = re.search(r"[A-Z2-9]{4}-[A-Z2-9]{4}-[A-Z2-9]{4}-[A-Z2-9]{4}", page.content.decode())[0]

    # 3. They enrol it: the password, the code, an authenticator app of their own.
    browser = Client()
    browser.post(reverse("login"), {"username": "newcomer", "password": NEW_PASSWORD})
    browser.post(reverse("login_verify"), {"code": code})
    browser.get(reverse("login_verify"))
    device = TOTPDevice.objects.get(user=newcomer, confirmed=False)
    assert browser.post(reverse("login_verify"), {"code": totp_code(device)}).status_code == 200
    assert browser.get(reverse("casefiles:case_list")).status_code == 200

    # 4. They put it in a group, in the Django admin.
    investigators = Group.objects.get(name=INVESTIGATOR_GROUP)
    url = reverse("admin:auth_user_change", args=[newcomer.pk])
    form = admin.get(url).context["adminform"].form
    data = {k: v for k, v in form.initial.items() if v is not None and k in form.fields}
    data.pop("password", None)
    data.pop("last_login", None)
    data.update(
        date_joined_0=newcomer.date_joined.strftime("%Y-%m-%d"),
        date_joined_1=newcomer.date_joined.strftime("%H:%M:%S"),
        is_active="on",
        groups=[investigators.pk],
    )
    assert admin.post(url, data).status_code == 302
    assert newcomer.groups.filter(name=INVESTIGATOR_GROUP).exists()

    # 5. They give it a lead membership in the Django admin: refused, it waits.
    response = admin.post(
        reverse("admin:casefiles_membership_add"),
        {"user": newcomer.pk, "case": cast.case.pk, "role": Role.LEAD},
        follow=True,
    )
    assert response.status_code == 200
    assert "needs a second person" in response.content.decode()
    assert not _in_force(newcomer, cast.case)
    pending = GrantRequest.objects.get(user=newcomer, case=cast.case)
    assert pending.outcome == GrantRequest.Outcome.PENDING
    assert set(pending.why) == {"own_account", "not_lead"}
    assert AuditEntry.objects.filter(action="membership.grant_ask", actor=cast.admin).exists()

    # Signed in as the account, the case and the witness are out of reach.
    reveal = reverse("people:person_reveal", args=[cast.case.reference, witness.code])
    assert browser.get(cast.case.get_absolute_url()).status_code == 404
    assert browser.post(reveal, {"reason": "curious"}).status_code == 404

    # The asker cannot approve their own request...
    admin.post(reverse("grant_decide", args=[pending.pk, "approve"]))
    pending.refresh_from_db()
    assert pending.outcome == GrantRequest.Outcome.PENDING
    assert not _in_force(newcomer, cast.case)

    # ...another admin decides, on the access requests page.
    other = VerifiedClient()
    other.force_login(second_admin)
    listed = other.get(reverse("access_requests")).content.decode()
    assert "newcomer" in listed and "Approve" in listed
    other.post(reverse("grant_decide", args=[pending.pk, "approve"]))
    pending.refresh_from_db()
    assert pending.outcome == GrantRequest.Outcome.APPROVED
    assert role_in(newcomer, cast.case) == Role.LEAD
    grant = AuditEntry.objects.get(action="membership.grant", actor=second_admin)
    assert grant.details["asked_by"] == "admin"


def test_an_admin_who_enrolled_an_account_cannot_grant_it_even_observer(cast, second_admin):
    newcomer = UserFactory(username="newcomer")
    account_services.issue_enrolment_code(actor=cast.admin, user=newcomer)
    with pytest.raises(services.SecondAdminNeeded):
        services.grant_membership(
            actor=cast.admin, case=cast.case, user=newcomer, role=Role.OBSERVER
        )
    assert not _in_force(newcomer, cast.case)
    # Another admin, who neither created nor enrolled it, asks in turn (the account is
    # held by an admin), and a third who holds it not approves.
    asked = services.grant_or_ask(
        actor=second_admin, case=cast.case, user=newcomer, role=Role.OBSERVER
    )
    assert asked.why == ["held_by_other"]
    third = UserFactory(username="admin3", groups=[ADMIN_GROUP], is_staff=True)
    services.decide_grant(actor=third, request=asked, approve=True)
    assert role_in(newcomer, cast.case) == Role.OBSERVER


def test_lead_or_investigator_from_an_admin_who_is_not_the_lead_waits(cast, second_admin):
    colleague = UserFactory(username="colleague", groups=[INVESTIGATOR_GROUP, LAWYER_GROUP])
    for role in (Role.LEAD, Role.INVESTIGATOR):
        with pytest.raises(services.SecondAdminNeeded):
            services.grant_membership(actor=cast.admin, case=cast.case, user=colleague, role=role)
    # Lawyer and observer reveal no one: one admin grants them.
    services.grant_membership(actor=cast.admin, case=cast.case, user=colleague, role="lawyer")
    assert role_in(colleague, cast.case) == Role.LAWYER
    # The case's lead grants investigator alone.
    other = UserFactory(username="other", groups=[INVESTIGATOR_GROUP])
    services.grant_membership(actor=cast.lead, case=cast.case, user=other, role="investigator")
    assert role_in(other, cast.case) == Role.INVESTIGATOR


def test_a_role_upgrade_is_a_grant_and_waits_too(cast, second_admin):
    observer = Membership.objects.get(user=cast.observer)
    cast.observer.groups.add(Group.objects.get(name=INVESTIGATOR_GROUP))
    with pytest.raises(services.SecondAdminNeeded):
        services.update_membership(
            actor=cast.admin, membership=observer, role=Role.LEAD, expires_at=None
        )
    asked = services.grant_or_ask(
        actor=cast.admin,
        case=cast.case,
        user=cast.observer,
        role=Role.LEAD,
        membership=observer,
    )
    assert isinstance(asked, GrantRequest)
    assert role_in(cast.observer, cast.case) == Role.OBSERVER
    with pytest.raises(ValidationError, match="Another admin decides"):
        services.decide_grant(actor=cast.admin, request=asked, approve=True)
    services.decide_grant(actor=second_admin, request=asked, approve=True)
    assert role_in(cast.observer, cast.case) == Role.LEAD
    change = AuditEntry.objects.get(action="membership.change")
    assert change.actor == second_admin and change.details["changes"]["role"] == [
        "observer",
        "lead",
    ]


def test_a_role_change_in_the_django_admin_becomes_a_request_not_an_error(
    cast, second_admin, client
):
    observer = Membership.objects.get(user=cast.observer)
    cast.observer.groups.add(Group.objects.get(name=INVESTIGATOR_GROUP))
    client.force_login(cast.admin)
    response = client.post(
        reverse("admin:casefiles_membership_change", args=[observer.pk]),
        {"role": Role.INVESTIGATOR, "expires_at_0": "", "expires_at_1": ""},
        follow=True,
    )
    assert response.status_code == 200
    assert "needs a second person" in response.content.decode()
    observer.refresh_from_db()
    assert observer.role == Role.OBSERVER
    assert GrantRequest.objects.get(membership=observer).role == Role.INVESTIGATOR


def test_approving_an_access_request_as_an_admin_who_is_not_lead_waits(cast, second_admin):
    req = services.request_access(user=cast.outsider, case=cast.case, reason="I document it")
    services.decide_access_request(
        actor=cast.admin, access_request=req, approve=True, role=Role.INVESTIGATOR
    )
    req.refresh_from_db()
    assert req.status == AccessRequest.Status.PENDING
    assert not _in_force(cast.outsider, cast.case)
    pending = GrantRequest.objects.get(access_request=req)
    services.decide_grant(actor=second_admin, request=pending, approve=True)
    req.refresh_from_db()
    assert req.status == AccessRequest.Status.APPROVED and req.decided_by == second_admin
    assert role_in(cast.outsider, cast.case) == Role.INVESTIGATOR


def test_a_refused_or_withdrawn_grant_changes_nothing(cast, second_admin):
    asked = services.grant_or_ask(
        actor=cast.admin, case=cast.case, user=cast.outsider, role=Role.INVESTIGATOR
    )
    services.decide_grant(actor=second_admin, request=asked, approve=False)
    asked.refresh_from_db()
    assert asked.outcome == GrantRequest.Outcome.REFUSED
    again = services.grant_or_ask(
        actor=cast.admin, case=cast.case, user=cast.outsider, role=Role.INVESTIGATOR
    )
    with pytest.raises(ValidationError, match="already waiting"):
        services.grant_or_ask(actor=cast.admin, case=cast.case, user=cast.outsider, role=Role.LEAD)
    services.decide_grant(actor=cast.admin, request=again, approve=False)
    again.refresh_from_db()
    assert again.outcome == GrantRequest.Outcome.CANCELLED
    assert not _in_force(cast.outsider, cast.case)
    assert {"membership.grant_refused", "membership.grant_cancelled"} <= set(
        AuditEntry.objects.values_list("action", flat=True)
    )


def test_a_lone_admins_grant_waits_and_the_case_lead_consents_to_it(cast):
    """With no second admin a grant that needs one waits all the same; the case's lead
    (a second person) may consent, and the grant is then theirs to answer for."""
    asked = services.grant_or_ask(
        actor=cast.admin, case=cast.case, user=cast.outsider, role=Role.INVESTIGATOR
    )
    assert isinstance(asked, GrantRequest)
    assert role_in(cast.outsider, cast.case) is None
    assert not AuditEntry.objects.filter(action="membership.grant").exists()
    services.decide_grant(actor=cast.lead, request=asked, approve=True)
    assert role_in(cast.outsider, cast.case) == Role.INVESTIGATOR
    entry = AuditEntry.objects.get(action="membership.grant")
    assert entry.actor == cast.lead
    assert (entry.details["asked_by"], entry.details["consent_of_lead"]) == ("admin", True)
    assert "sole_admin" not in entry.details


def test_nobody_but_an_admin_or_the_cases_lead_decides_a_waiting_grant(cast, other_case):
    asked = services.grant_or_ask(
        actor=cast.admin, case=cast.case, user=cast.outsider, role=Role.INVESTIGATOR
    )
    for who in (cast.investigator, cast.lawyer, cast.observer):
        with pytest.raises(PermissionDenied):
            services.decide_grant(actor=who, request=asked, approve=True)
    assert role_in(cast.outsider, cast.case) is None
