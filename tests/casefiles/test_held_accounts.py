"""An admin who created, enrolled or recovered an account holds it (they may know its
password or second factor): that account is one person with them to the rule that no one
reaches a case alone. It is not made an admin by them, it approves none of their asks,
and its own access is approved by an admin who holds it not (docs/decisions/0005)."""

from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.exceptions import ValidationError
from django.urls import reverse
from django.utils import timezone

from accounts import services as account_services
from accounts.models import SecondFactorReset
from casefiles import services
from casefiles.access import ADMIN_GROUP, INVESTIGATOR_GROUP, Role, is_system_admin, role_in
from casefiles.models import AccessRequest, AuditEntry, GrantRequest, Membership
from tests.conftest import VerifiedClient
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

PASSWORD = "a long passphrase nobody else knows 42"


@pytest.fixture
def second_admin(cast):
    return UserFactory(username="admin2", groups=[ADMIN_GROUP], is_staff=True)


def _in_force(user, case):
    return Membership.objects.active().filter(user=user, case=case).exists()


def _admin_client(user):
    client = VerifiedClient()
    client.force_login(user)
    return client


def _change_data(client, user, **changes):
    url = reverse("admin:auth_user_change", args=[user.pk])
    form = client.get(url).context["adminform"].form
    data = {k: v for k, v in form.initial.items() if v is not None and k in form.fields}
    data.pop("password", None)
    data.pop("last_login", None)
    data.update(
        date_joined_0=user.date_joined.strftime("%Y-%m-%d"),
        date_joined_1=user.date_joined.strftime("%H:%M:%S"),
        is_active="on",
        **changes,
    )
    return url, form, data


def test_an_admin_cannot_make_an_account_they_created_an_admin(cast, second_admin):
    admin = _admin_client(cast.admin)
    created = admin.post(
        reverse("admin:auth_user_add"),
        {"username": "puppet", "password1": PASSWORD, "password2": PASSWORD},
    )
    assert created.status_code == 302
    puppet = get_user_model().objects.get(username="puppet")
    account_services.issue_enrolment_code(actor=cast.admin, user=puppet)
    admins = Group.objects.get(name=ADMIN_GROUP)
    investigators = Group.objects.get(name=INVESTIGATOR_GROUP)

    # The change page offers neither the Admin group nor staff status...
    url, form, data = _change_data(admin, puppet)
    assert "is_staff" not in form.fields
    assert admins not in form.fields["groups"].queryset
    # ...and a crafted POST asking for both changes nothing.
    data.update(groups=[admins.pk, investigators.pk], is_staff="on")
    response = admin.post(url, data)
    assert response.status_code == 200  # the form comes back with its error
    puppet.refresh_from_db()
    assert not puppet.is_staff and not is_system_admin(puppet)
    assert not puppet.groups.exists()

    # An ordinary group they may still give.
    url, _form, data = _change_data(admin, puppet, groups=[investigators.pk])
    assert admin.post(url, data).status_code == 302
    assert list(puppet.groups.all()) == [investigators]

    # Another admin, who holds it not, may make it an admin.
    other = _admin_client(second_admin)
    url, _form, data = _change_data(other, puppet, groups=[admins.pk], is_staff="on")
    assert other.post(url, data).status_code == 302
    assert is_system_admin(puppet)


def test_an_admin_account_the_asker_holds_approves_none_of_their_asks(cast, second_admin):
    """Even made an admin by someone else, an account the asker created cannot approve a
    grant, a reset or an access request of theirs: they would approve their own."""
    puppet = UserFactory(username="puppet", groups=[ADMIN_GROUP], is_staff=True)
    account_services.issue_enrolment_code(actor=cast.admin, user=puppet)

    newcomer = UserFactory(username="newcomer")
    account_services.issue_enrolment_code(actor=cast.admin, user=newcomer)
    asked = services.grant_or_ask(
        actor=cast.admin, case=cast.case, user=newcomer, role=Role.OBSERVER
    )
    with pytest.raises(ValidationError, match="created, enrolled or recovered by admin"):
        services.decide_grant(actor=puppet, request=asked, approve=True)
    assert not _in_force(newcomer, cast.case)

    account_services.ask_second_factor_reset(
        actor=cast.admin, user=cast.lawyer, reason="lost the phone", password=True
    )
    reset = SecondFactorReset.objects.get(user=cast.lawyer)
    with pytest.raises(ValidationError, match="cannot approve their requests"):
        account_services.decide_second_factor_reset(actor=puppet, request=reset, approve=True)
    reset.refresh_from_db()
    assert reset.outcome == SecondFactorReset.Outcome.PENDING

    lead_puppet = Membership.objects.get(user=cast.lead).user
    account_services.issue_enrolment_code(actor=cast.admin, user=lead_puppet)
    req = services.request_access(user=cast.admin, case=cast.case, reason="I must read it")
    with pytest.raises(ValidationError, match="cannot approve their requests"):
        services.decide_access_request(
            actor=lead_puppet, access_request=req, approve=True, role=Role.OBSERVER
        )
    req.refresh_from_db()
    assert req.status == AccessRequest.Status.PENDING
    assert not _in_force(cast.admin, cast.case)

    # An admin who holds none of them approves.
    services.decide_grant(actor=second_admin, request=asked, approve=True)
    assert role_in(newcomer, cast.case) == Role.OBSERVER


def test_an_admin_who_approved_a_recovery_holds_the_account(cast, second_admin):
    """The recovery code goes to the approving admin: they may now sign in as the user."""
    account_services.ask_second_factor_reset(
        actor=second_admin, user=cast.outsider, reason="forgot the password", password=True
    )
    account_services.decide_second_factor_reset(
        actor=cast.admin,
        request=SecondFactorReset.objects.get(user=cast.outsider),
        approve=True,
    )
    with pytest.raises(services.SecondAdminNeeded):
        services.grant_membership(
            actor=cast.admin, case=cast.case, user=cast.outsider, role=Role.OBSERVER
        )
    assert not _in_force(cast.outsider, cast.case)


def test_an_admin_who_holds_the_account_cannot_approve_its_access(cast, second_admin):
    holder = UserFactory(username="holder", groups=[ADMIN_GROUP], is_staff=True)
    account_services.issue_enrolment_code(actor=holder, user=cast.outsider)

    asked = services.grant_or_ask(
        actor=cast.admin, case=cast.case, user=cast.outsider, role=Role.INVESTIGATOR
    )
    with pytest.raises(ValidationError, match="you cannot approve its access"):
        services.decide_grant(actor=holder, request=asked, approve=True)
    assert not _in_force(cast.outsider, cast.case)

    req = services.request_access(user=cast.outsider, case=cast.case, reason="I document it")
    with pytest.raises(ValidationError, match="you cannot approve its access"):
        services.decide_access_request(
            actor=holder, access_request=req, approve=True, role=Role.OBSERVER
        )

    services.decide_grant(actor=second_admin, request=asked, approve=True)
    assert role_in(cast.outsider, cast.case) == Role.INVESTIGATOR


def test_an_account_held_by_another_admin_waits_for_one_who_holds_it_not(cast, second_admin):
    holder = UserFactory(username="holder", groups=[ADMIN_GROUP], is_staff=True)
    account_services.issue_enrolment_code(actor=holder, user=cast.outsider)

    with pytest.raises(services.SecondAdminNeeded) as needed:
        services.grant_membership(
            actor=cast.admin, case=cast.case, user=cast.outsider, role=Role.OBSERVER
        )
    assert needed.value.why == ["held_by_other"]
    asked = services.grant_or_ask(
        actor=cast.admin, case=cast.case, user=cast.outsider, role=Role.OBSERVER
    )
    assert not _in_force(cast.outsider, cast.case)

    page = _admin_client(second_admin).get(reverse("access_requests")).content.decode()
    assert "Held by another admin" in page

    with pytest.raises(ValidationError):
        services.decide_grant(actor=holder, request=asked, approve=True)
    services.decide_grant(actor=second_admin, request=asked, approve=True)
    assert role_in(cast.outsider, cast.case) == Role.OBSERVER
    assert GrantRequest.objects.get(pk=asked.pk).decided_by == second_admin


def test_a_lone_admin_cannot_grant_an_account_they_hold_even_as_observer(cast):
    """A flag is not a second person: the grant waits (decision 0022)."""
    account_services.issue_enrolment_code(actor=cast.admin, user=cast.outsider)
    with pytest.raises(services.SecondAdminNeeded):
        services.grant_membership(
            actor=cast.admin, case=cast.case, user=cast.outsider, role=Role.OBSERVER
        )
    assert role_in(cast.outsider, cast.case) is None
    assert not AuditEntry.objects.filter(action="membership.grant").exists()


def test_a_longer_expiry_for_an_account_another_admin_holds_waits_too(cast, second_admin):
    holder = UserFactory(username="holder", groups=[ADMIN_GROUP], is_staff=True)
    membership = Membership.objects.get(user=cast.observer)
    membership.expires_at = timezone.now() + timedelta(days=3)
    membership.save(update_fields=["expires_at"])
    account_services.issue_enrolment_code(actor=holder, user=cast.observer)
    later = timezone.now() + timedelta(days=300)
    with pytest.raises(services.SecondAdminNeeded):
        services.update_membership(
            actor=cast.admin, membership=membership, role=Role.OBSERVER, expires_at=later
        )
    membership.refresh_from_db()
    assert membership.expires_at < later
