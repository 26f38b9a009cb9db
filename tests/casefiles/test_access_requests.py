"""Asking for access, deciding, expiry and revocation, and the admins' access pages."""

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from casefiles import services
from casefiles.access import Role
from casefiles.models import AccessRequest, AuditEntry, Membership
from tests.factories import MembershipFactory, UserFactory

pytestmark = pytest.mark.django_db


def _ask(client, user, reference, reason="I interview the witnesses of this case."):
    client.force_login(user)
    return client.post(reverse("request_access"), {"reference": reference, "reason": reason})


def test_a_request_is_recorded_and_audited_but_answers_alike_for_unknown_cases(client, cast):
    known = _ask(client, cast.outsider, cast.case.reference)
    unknown = _ask(client, cast.outsider, "NO-SUCH-CASE")
    assert known.status_code == unknown.status_code == 302
    assert known["Location"] == unknown["Location"]
    req = AccessRequest.objects.get()
    assert (req.user, req.case, req.status) == (cast.outsider, cast.case, "pending")
    entry = AuditEntry.objects.get(action="access.request")
    assert (entry.actor, entry.case, entry.target_id) == (cast.outsider, cast.case, str(req.pk))


def test_the_lead_approves_with_role_and_expiry_and_the_user_sees_the_case(client, cast):
    _ask(client, cast.outsider, cast.case.reference)
    req = AccessRequest.objects.get()
    client.force_login(cast.lead)
    assert req.user.username in client.get(reverse("access_requests")).content.decode()
    form = client.get(reverse("access_request_decide", args=[req.pk])).content.decode()
    assert req.reason in form and 'name="approve"' in form
    day = (timezone.now() + timedelta(days=30)).date()
    response = client.post(
        reverse("access_request_decide", args=[req.pk]),
        {"role": "investigator", "expires_on": day.isoformat(), "approve": "1"},
    )
    assert response.status_code == 302
    req.refresh_from_db()
    m = req.membership
    assert (req.status, req.decided_by, m.role, m.granted_by) == (
        "approved",
        cast.lead,
        "investigator",
        cast.lead,
    )
    assert m.expires_at.date() == day
    assert AuditEntry.objects.filter(action="access.approve", target_id=str(req.pk)).exists()
    assert AuditEntry.objects.filter(action="membership.grant", actor=cast.lead).exists()
    client.force_login(cast.outsider)
    assert client.get(cast.case.get_absolute_url()).status_code == 200


def test_a_refusal_grants_nothing_and_is_audited(client, cast):
    _ask(client, cast.outsider, cast.case.reference)
    req = AccessRequest.objects.get()
    client.force_login(cast.admin)
    client.post(
        reverse("access_request_decide", args=[req.pk]), {"note": "Not needed", "refuse": "1"}
    )
    req.refresh_from_db()
    assert req.status == "refused"
    assert not Membership.objects.filter(user=cast.outsider).exists()
    entry = AuditEntry.objects.get(action="access.refuse")
    assert entry.details["note"] == "Not needed"


def test_only_leads_of_the_case_and_admins_may_decide(client, cast, other_case):
    _ask(client, cast.outsider, cast.case.reference)
    req = AccessRequest.objects.get()
    other_lead = UserFactory(groups=["Investigator"])
    MembershipFactory(user=other_lead, case=other_case, role=Role.LEAD)
    for user in (cast.investigator, cast.lawyer, other_lead):
        client.force_login(user)
        url = reverse("access_request_decide", args=[req.pk])
        assert client.get(url).status_code == 404
        assert client.post(url, {"role": "observer", "approve": "1"}).status_code == 404
    req.refresh_from_db()
    assert req.status == "pending"


def test_an_approval_needs_a_role_the_user_may_hold(client, cast):
    _ask(client, cast.outsider, cast.case.reference)
    req = AccessRequest.objects.get()
    client.force_login(cast.lead)
    url = reverse("access_request_decide", args=[req.pk])
    # The form offers no role ready chosen: one click on Approve grants nothing.
    form = client.get(url).content.decode()
    assert '<option value="" selected>' in form and 'value="lead" selected' not in form
    refused = client.post(url, {"approve": "1"})
    assert refused.context["form"].errors["role"] == ["Choose a role."]
    assert not Membership.objects.filter(user=cast.outsider).exists()
    response = client.post(url, {"role": "lawyer", "approve": "1"})
    assert "needs an account in the group" in response.content.decode()
    req.refresh_from_db()
    assert req.status == "pending"


def test_an_expired_member_gets_404_at_their_very_next_request(client, cast):
    m = Membership.objects.get(user=cast.observer)
    services.update_membership(
        actor=cast.admin,
        membership=m,
        role=m.role,
        expires_at=timezone.now() + timedelta(seconds=2),
    )
    client.force_login(cast.observer)
    assert client.get(cast.case.get_absolute_url()).status_code == 200
    # Time passes: the expiry is in the past, without anyone doing anything.
    Membership.objects.filter(pk=m.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    assert client.get(cast.case.get_absolute_url()).status_code == 404


def test_a_revoked_member_gets_404_at_their_very_next_request_from_the_admin_page(client, cast):
    member = client
    member.force_login(cast.investigator)
    assert member.get(cast.case.get_absolute_url()).status_code == 200
    from tests.conftest import VerifiedClient

    admin = VerifiedClient()
    admin.force_login(cast.admin)
    m = Membership.objects.get(user=cast.investigator)
    assert admin.post(reverse("membership_revoke", args=[m.pk])).status_code == 302
    assert member.get(cast.case.get_absolute_url()).status_code == 404
    assert AuditEntry.objects.filter(action="membership.revoke", actor=cast.admin).exists()


def test_admins_see_users_memberships_across_cases_and_expiring_access(client, cast, other_case):
    MembershipFactory(
        user=cast.lawyer,
        case=other_case,
        role=Role.LAWYER,
        expires_at=timezone.now() + timedelta(days=3),
    )
    client.force_login(cast.admin)
    users = client.get(reverse("manage_users")).content.decode()
    assert "lawyer" in users and "outsider" in users
    detail = client.get(reverse("manage_user", args=[cast.lawyer.pk])).content.decode()
    assert cast.case.reference in detail and other_case.reference in detail
    expiring = client.get(reverse("manage_expiring")).content.decode()
    assert other_case.reference in expiring and cast.case.reference not in expiring
    client.force_login(cast.lead)
    for name, args in (("manage_users", []), ("manage_user", [cast.lawyer.pk])):
        assert client.get(reverse(name, args=args)).status_code == 403


def test_deactivating_a_user_keeps_their_history_and_ends_their_access(client, cast):
    client.force_login(cast.investigator)
    client.get(cast.case.get_absolute_url())
    from tests.conftest import VerifiedClient

    admin = VerifiedClient()
    admin.force_login(cast.admin)
    response = admin.post(reverse("manage_user_action", args=[cast.investigator.pk, "deactivate"]))
    assert response.status_code == 302
    cast.investigator.refresh_from_db()
    assert not cast.investigator.is_active
    assert Membership.objects.filter(user=cast.investigator).exists()
    assert AuditEntry.objects.filter(actor=cast.investigator, action="case.view").exists()
    assert client.get(cast.case.get_absolute_url()).status_code == 302  # signed out
    assert AuditEntry.objects.filter(action="user.deactivate").exists()


def test_nobody_decides_on_their_own_request(cast):
    req = services.request_access(user=cast.admin, case=cast.case, reason="audit")
    from django.core.exceptions import ValidationError

    with pytest.raises(ValidationError):
        services.decide_access_request(
            actor=cast.admin, access_request=req, approve=True, role="observer"
        )


def test_the_users_page_costs_the_same_queries_for_many_users(
    client, cast, django_assert_num_queries
):
    client.force_login(cast.admin)
    client.get(reverse("manage_users"))
    with django_assert_num_queries(8) as few:
        client.get(reverse("manage_users"))
    for _ in range(20):
        MembershipFactory(user=UserFactory(), case=cast.case)
    with django_assert_num_queries(len(few.captured_queries)):
        response = client.get(reverse("manage_users"))
    assert response.content.decode().count("/manage/users/") >= 27
