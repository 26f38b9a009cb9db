"""Asking to join a case, and deciding on it."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from .. import access, audit
from ..models import (
    AccessRequest,
    Case,
)
from .holders import check_not_held
from .memberships import SecondAdminNeeded, _iso, ask_grant_within, grant_within

if TYPE_CHECKING:
    from django.contrib.auth.models import User as Account


def request_access(*, user: Account, case: Case, reason: str) -> AccessRequest:
    """Ask to join ``case``. One pending request per user and case."""
    reason = (reason or "").strip()
    if not reason:
        raise ValidationError({"reason": _("Say why you need access.")})
    with transaction.atomic(durable=True):
        pending = AccessRequest.objects.filter(
            user=user, case=case, status=AccessRequest.Status.PENDING
        ).first()
        if pending is not None:
            return pending
        req = AccessRequest.objects.create(user=user, case=case, reason=reason)
        audit.record(user, "access.request", target=req, case=case, reason=reason)
    return req


def can_decide(actor: Account, access_request: AccessRequest) -> bool:
    return access.can(actor, access.Action.MANAGE_MEMBERS, access_request.case)


def decide_access_request(
    *,
    actor: Account,
    access_request: AccessRequest,
    approve: bool,
    role: str | None = None,
    expires_at: datetime | None = None,
    note: str = "",
) -> AccessRequest:
    """Approve (granting ``role`` until ``expires_at``) or refuse a pending request."""
    if not can_decide(actor, access_request):
        raise PermissionDenied
    if access_request.user_id == actor.pk:
        raise ValidationError(_("Nobody decides on their own request."))
    if approve and not role:
        raise ValidationError({"role": _("Choose a role.")})
    if approve:
        check_not_held(approver=actor, grantee=access_request.user)
    with transaction.atomic(durable=True):
        req = AccessRequest.objects.select_for_update().get(pk=access_request.pk)
        if req.status != AccessRequest.Status.PENDING:
            raise ValidationError(_("This request has already been decided."))
        if approve:
            try:
                membership = grant_within(
                    actor=actor, case=req.case, user=req.user, role=str(role), expires_at=expires_at
                )
            except SecondAdminNeeded as needed:
                # The request stays pending until another admin approves the grant.
                access_request.pending_grant = ask_grant_within(
                    actor,
                    case=req.case,
                    user=req.user,
                    role=role,
                    expires_at=expires_at,
                    why=needed.why,
                    note=note,
                    access_request=req,
                )
                return access_request
            _close_access_request(actor, req, membership, role, expires_at, note=note)
        else:
            req.status = AccessRequest.Status.REFUSED
            req.decided_by, req.decided_at, req.decision_note = actor, timezone.now(), note
            req.save(update_fields=["status", "decided_by", "decided_at", "decision_note"])
            audit.record(
                actor,
                "access.refuse",
                target=req,
                case=req.case,
                user=req.user.get_username(),
                role=None,
                expires_at=None,
                note=note,
            )
    access_request.__dict__.update(req.__dict__)
    return access_request


def _close_access_request(actor, req, membership, role, expires_at, note=None) -> None:
    req = AccessRequest.objects.select_for_update().get(pk=req.pk)
    if req.status != AccessRequest.Status.PENDING:
        return
    req.membership = membership
    req.status = AccessRequest.Status.APPROVED
    req.decided_by, req.decided_at = actor, timezone.now()
    if note is not None:
        req.decision_note = note
    req.save(update_fields=["status", "decided_by", "decided_at", "decision_note", "membership"])
    audit.record(
        actor,
        "access.approve",
        target=req,
        case=req.case,
        user=req.user.get_username(),
        role=role,
        expires_at=_iso(expires_at),
        note=req.decision_note,
    )
