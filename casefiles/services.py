"""Writes to cases and memberships. One function per write, audited in its transaction."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from . import access, audit
from .models import Case, Membership


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value else None


def create_case(
    *,
    actor: Any,
    reference: str,
    title: str,
    summary: str = "",
    status: str = Case.Status.OPEN,
    sensitivity: str = Case.Sensitivity.CONFIDENTIAL,
    jurisdiction: str = "",
) -> Case:
    """Open a new case. Its members are granted separately."""
    case = Case(
        reference=reference,
        title=title,
        summary=summary,
        status=status,
        sensitivity=sensitivity,
        jurisdiction=jurisdiction,
        created_by=actor,
    )
    case.full_clean()
    with transaction.atomic():
        case.save()
        audit.record(actor, "case.create", target=case, case=case, reference=reference)
    return case


def update_case(*, actor: Any, case: Case, **changes: Any) -> Case:
    """Change a case's descriptive fields; the audit entry keeps before and after."""
    before = {name: getattr(case, name) for name in changes}
    for name, value in changes.items():
        setattr(case, name, value)
    case.full_clean()
    changed = {n: [before[n], v] for n, v in changes.items() if before[n] != v}
    if not changed:
        return case
    with transaction.atomic():
        case.save(update_fields=list(changed))
        audit.record(actor, "case.update", target=case, case=case, changes=changed)
    return case


def _check_expiry(expires_at: datetime | None) -> None:
    if expires_at is not None and expires_at <= timezone.now():
        raise ValidationError({"expires_at": _("The expiry must be in the future.")})


def grant_membership(
    *,
    actor: Any,
    case: Case,
    user: Any,
    role: str,
    expires_at: datetime | None = None,
) -> Membership:
    """Give ``user`` a role in ``case``. An unrevoked membership is replaced by revoking it."""
    access.check_role_allowed(user, role)
    _check_expiry(expires_at)
    with transaction.atomic():
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
        )
    return membership


def update_membership(
    *, actor: Any, membership: Membership, role: str, expires_at: datetime | None
) -> Membership:
    """Change the role or expiry of a membership in force."""
    if membership.revoked_at is not None:
        raise ValidationError(_("A revoked membership cannot be changed; grant a new one."))
    access.check_role_allowed(membership.user, role)
    if expires_at != membership.expires_at:
        _check_expiry(expires_at)
    changes = {}
    if role != membership.role:
        changes["role"] = [membership.role, role]
    if expires_at != membership.expires_at:
        changes["expires_at"] = [_iso(membership.expires_at), _iso(expires_at)]
    if not changes:
        return membership
    membership.role, membership.expires_at = role, expires_at
    with transaction.atomic():
        membership.save(update_fields=["role", "expires_at"])
        audit.record(
            actor,
            "membership.change",
            target=membership,
            case=membership.case,
            user=membership.user.get_username(),
            changes=changes,
        )
    return membership


def _revoke(actor: Any, membership: Membership, reason: str) -> None:
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


def revoke_membership(*, actor: Any, membership: Membership, reason: str = "") -> Membership:
    """End a membership now: the user's very next request no longer sees the case."""
    if membership.revoked_at is not None:
        return membership
    with transaction.atomic():
        _revoke(actor, membership, reason=reason)
    return membership
