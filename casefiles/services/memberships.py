"""Memberships: grants, changes of role or expiry, revocations, and the grants that
wait for a second admin (grant requests)."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from django.core.exceptions import PermissionDenied, ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from .. import access, audit
from ..access import Role
from ..models import (
    Case,
    GrantRequest,
    Membership,
)
from .holders import check_not_held, held_by_another_admin, holds, only_admin

if TYPE_CHECKING:
    from django.contrib.auth.models import User as Account


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value else None


def _check_expiry(expires_at: datetime | None) -> None:
    if expires_at is not None and expires_at <= timezone.now():
        raise ValidationError({"expires_at": _("The expiry must be in the future.")})


def second_admin_needed(actor: Account, case: Case, user: Account, role: str) -> list[str]:
    """Why giving ``user`` ``role`` in ``case`` takes a second admin, if it does (an
    empty list when ``actor`` may do it alone).

    Only an admin's grants are held back: a lead grants within their own case. An admin
    who created the account, issued its enrolment code or approved its recovery may hold
    its password and second factor (any role then lets them into the case as that
    account); so may any other admin who did, whence an account held by another admin
    waits too (for an admin who holds it not, ``check_not_held``). And lead or
    investigator, who may reveal identities, granted by an admin who is not the case's
    lead, puts someone into the case on one admin's word.
    """
    if actor is None or not access.is_system_admin(actor):
        return []
    why = []
    if holds(actor, user):
        why.append(GrantRequest.Why.OWN_ACCOUNT.value)
    elif held_by_another_admin(actor, user):
        why.append(GrantRequest.Why.HELD_BY_OTHER.value)
    if role in (Role.LEAD, Role.INVESTIGATOR) and access.role_in(actor, case) != Role.LEAD:
        why.append(GrantRequest.Why.NOT_LEAD.value)
    return why


class SecondAdminNeeded(ValidationError):
    """The grant must be asked for (``grant_or_ask``) and approved by a second person:
    another admin, or the case's lead. Never made on one admin's word (decision 0022)."""

    def __init__(self, why: list[str]):
        super().__init__(
            _(
                "This grant needs a second person: it waits for another admin's approval or "
                "the consent of the case's lead."
            )
        )
        self.why = why


def _check_grant(actor: Account, case: Case, user: Account, role: str, expires_at) -> None:
    if actor is not None and actor.pk == user.pk:
        raise ValidationError(_("Nobody can grant access to themselves; ask for it instead."))
    access.check_role_allowed(user, role)
    _check_expiry(expires_at)


def _grant(actor: Account, case: Case, user: Account, role: str, expires_at, **details: Any):
    current = (
        Membership.objects.select_for_update()
        .filter(user=user, case=case, revoked_at__isnull=True)
        .first()
    )
    if current is not None:
        _revoke(actor, current, reason="replaced")
    membership = Membership.objects.create(
        user=user, case=case, role=role, granted_by=actor, expires_at=expires_at
    )
    audit.record(
        actor,
        "membership.grant",
        target=membership,
        case=case,
        user=user.get_username(),
        role=role,
        expires_at=_iso(expires_at),
        **details,
    )
    return membership


def grant_membership(
    *,
    actor: Account,
    case: Case,
    user: Account,
    role: str,
    expires_at: datetime | None = None,
) -> Membership:
    """Give ``user`` a role in ``case``. An unrevoked membership is replaced by revoking it.

    Nobody grants access to themselves: an admin who must read a case asks, and a lead
    of the case or another admin decides (least privilege, four eyes). A grant that
    needs a second admin (``second_admin_needed``) raises ``SecondAdminNeeded``: ask for
    it with ``grant_or_ask``. With no other admin it waits all the same, for the case's
    lead or for a second admin to be added: a flag is not a second person (0022).
    """
    with transaction.atomic(durable=True):
        return grant_within(actor=actor, case=case, user=user, role=role, expires_at=expires_at)


def grant_within(
    *, actor: Account, case: Case, user: Account, role: str, expires_at: datetime | None
) -> Membership:
    """``grant_membership`` inside a service's transaction already open (a decision on
    an access request): the same checks, the same entry."""
    _check_grant(actor, case, user, role, expires_at)
    _check_not_member(case, user)
    if why := second_admin_needed(actor, case, user, role):
        raise SecondAdminNeeded(why)
    return _grant(actor, case, user, role, expires_at)


def _check_not_member(case: Case, user: Account) -> None:
    """A grant to someone who has access already would revoke that access and grant it
    again: say so instead, and point to the change of their membership."""
    current = (
        Membership.objects.filter(access.active_membership_q(), case=case, user=user)
        .only("role")
        .first()
    )
    if current is not None:
        raise ValidationError(
            _(
                "%(user)s already has access to this case as %(role)s: change their role "
                "or expiry with Change on the list of members."
            )
            % {"user": user.get_username(), "role": current.get_role_display()}
        )


def grant_or_ask(
    *,
    actor: Account,
    case: Case,
    user: Account,
    role: str,
    expires_at: datetime | None = None,
    note: str = "",
    membership: Membership | None = None,
) -> Membership | GrantRequest:
    """Grant (or, with ``membership``, change) access at once when ``actor`` may do it
    alone; otherwise ask another admin and return the pending ``GrantRequest``."""
    try:
        if membership is not None:
            return update_membership(
                actor=actor, membership=membership, role=role, expires_at=expires_at
            )
        return grant_membership(actor=actor, case=case, user=user, role=role, expires_at=expires_at)
    except SecondAdminNeeded as needed:
        return _ask_grant(
            actor,
            case=case,
            user=user,
            role=role,
            expires_at=expires_at,
            why=needed.why,
            note=note,
            membership=membership,
        )


def _ask_grant(
    actor: Account, *, case, user, role, expires_at, why, note="", **links
) -> GrantRequest:
    with transaction.atomic(durable=True):
        return ask_grant_within(
            actor,
            case=case,
            user=user,
            role=role,
            expires_at=expires_at,
            why=why,
            note=note,
            **links,
        )


def ask_grant_within(
    actor: Account, *, case, user, role, expires_at, why, note="", **links
) -> GrantRequest:
    """Ask another admin for a grant, inside a service's transaction already open."""
    try:
        with transaction.atomic():
            request = GrantRequest.objects.create(
                case=case,
                user=user,
                role=role,
                expires_at=expires_at,
                why=why,
                note=(note or "").strip()[:2000],
                requested_by=actor,
                **links,
            )
    except IntegrityError:
        raise ValidationError(
            _("A grant of access to this case for this user is already waiting for a decision.")
        ) from None
    audit.record(
        actor,
        "membership.grant_ask",
        target=request,
        case=case,
        user=user.get_username(),
        role=role,
        expires_at=_iso(expires_at),
        why=why,
        change=request.membership_id,
        access_request=request.access_request_id,
    )
    return request


def decide_grant(*, actor: Account, request: GrantRequest, approve: bool) -> Membership | None:
    """Another admin, or the lead of the case (their consent), approves (the grant or
    change is made, as theirs) or refuses; whoever asked may withdraw (``approve``
    False). Returns the membership when approved."""
    if not can_decide_grant(actor, request):
        raise PermissionDenied
    with transaction.atomic(durable=True):
        request = GrantRequest.objects.select_for_update().get(pk=request.pk)
        if request.outcome != GrantRequest.Outcome.PENDING:
            raise ValidationError(_("This grant has been decided already."))
        asked_by_actor = actor.pk == request.requested_by_id
        if approve and asked_by_actor:
            raise ValidationError(_("Another admin decides, not whoever asked."))
        if approve and actor.pk == request.user_id:
            raise ValidationError(_("Nobody can grant access to themselves; ask for it instead."))
        if approve:
            check_not_held(approver=actor, asker=request.requested_by, grantee=request.user)
        if not approve:
            outcome = (
                GrantRequest.Outcome.CANCELLED if asked_by_actor else GrantRequest.Outcome.REFUSED
            )
            GrantRequest.objects.filter(pk=request.pk).update(
                outcome=outcome, decided_by=actor, decided_at=timezone.now()
            )
            audit.record(
                actor,
                "membership.grant_cancelled" if asked_by_actor else "membership.grant_refused",
                target=request,
                case=request.case,
                user=request.user.get_username(),
            )
            return None
        details: dict[str, Any] = {
            "grant_request": request.pk,
            "asked_by": request.requested_by.get_username(),
        }
        if not access.is_system_admin(actor):
            details["consent_of_lead"] = True
        if request.membership_id is not None:
            current = Membership.objects.select_for_update().get(pk=request.membership_id)
            membership = _change(actor, current, request.role, request.expires_at, **details)
        else:
            _check_grant(actor, request.case, request.user, request.role, request.expires_at)
            membership = _grant(
                actor, request.case, request.user, request.role, request.expires_at, **details
            )
        GrantRequest.objects.filter(pk=request.pk).update(
            outcome=GrantRequest.Outcome.APPROVED,
            decided_by=actor,
            decided_at=timezone.now(),
            granted=membership,
        )
        if request.access_request_id is not None:
            from .access_requests import _close_access_request  # (it grants through here)

            _close_access_request(
                actor, request.access_request, membership, request.role, request.expires_at
            )
    return membership


def can_decide_grant(actor: Account, request: GrantRequest) -> bool:
    """Who may decide on a waiting grant: an admin, or a lead of its case (the lead's
    consent stands as the second person when there is no other admin, decision 0022).
    Whether this one may approve it is asked in ``decide_grant`` (never the asker, the
    account given access, or an account either holds)."""
    return access.is_system_admin(actor) or access.role_in(actor, request.case) == Role.LEAD


def nobody_to_decide(actor: Account, case: Case, user: Account) -> bool:
    """A grant ``actor`` asked for has nobody to approve it yet: no other admin, and no
    lead of the case but the account concerned."""
    if not only_admin(actor, user):
        return False
    leads = Membership.objects.filter(access.active_membership_q(), case=case, role=Role.LEAD)
    return not leads.exclude(user__in=[actor.pk, user.pk]).exists()


def update_membership(
    *, actor: Account, membership: Membership, role: str, expires_at: datetime | None
) -> Membership:
    """Change the role or expiry of a membership in force (never one's own).

    A new role is a grant of it: the rule of ``grant_membership`` applies (a second admin,
    ``SecondAdminNeeded``). So does a longer expiry for an account an admin holds
    (``holds``: this admin or another)."""
    _check_change(actor, membership, role, expires_at)
    why = []
    if role != membership.role:
        why = second_admin_needed(actor, membership.case, membership.user, role)
    elif _extends(membership.expires_at, expires_at):
        why = [
            w
            for w in second_admin_needed(actor, membership.case, membership.user, role)
            if w in (GrantRequest.Why.OWN_ACCOUNT, GrantRequest.Why.HELD_BY_OTHER)
        ]
    if why:
        raise SecondAdminNeeded(why)
    with transaction.atomic(durable=True):
        return _change(actor, membership, role, expires_at)


def _extends(before: datetime | None, after: datetime | None) -> bool:
    if before is None:
        return False
    return after is None or after > before


def _check_change(actor, membership, role, expires_at) -> None:
    if actor is not None and actor.pk == membership.user_id:
        raise ValidationError(_("Nobody can change their own access; ask for it instead."))
    if membership.revoked_at is not None:
        raise ValidationError(_("A revoked membership cannot be changed; grant a new one."))
    access.check_role_allowed(membership.user, role)
    if expires_at != membership.expires_at:
        _check_expiry(expires_at)


def _change(actor, membership, role, expires_at, **details) -> Membership:
    _check_change(actor, membership, role, expires_at)
    changes = {}
    if role != membership.role:
        changes["role"] = [membership.role, role]
    if expires_at != membership.expires_at:
        changes["expires_at"] = [_iso(membership.expires_at), _iso(expires_at)]
    if not changes:
        return membership
    membership.role, membership.expires_at = role, expires_at
    membership.save(update_fields=["role", "expires_at"])
    audit.record(
        actor,
        "membership.change",
        target=membership,
        case=membership.case,
        user=membership.user.get_username(),
        changes=changes,
        **details,
    )
    return membership


def _revoke(actor: Account, membership: Membership, reason: str) -> None:
    membership.revoked_at = timezone.now()
    membership.revoked_by = actor
    membership.save(update_fields=["revoked_at", "revoked_by"])
    audit.record(
        actor,
        "membership.revoke",
        target=membership,
        case=membership.case,
        user=membership.user.get_username(),
        role=membership.role,
        reason=reason,
    )


def revoke_membership(*, actor: Account, membership: Membership, reason: str = "") -> Membership:
    """End a membership now: the user's very next request no longer sees the case."""
    if membership.revoked_at is not None:
        return membership
    with transaction.atomic(durable=True):
        _revoke(actor, membership, reason=reason)
    return membership
