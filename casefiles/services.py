"""Writes to cases, memberships, access requests, second factors and sessions.

One function per write, audited in its transaction."""

from __future__ import annotations

import base64
import hashlib
import re
import secrets
from datetime import datetime, timedelta
from importlib import import_module
from typing import Any

from django.conf import settings
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext as _
from django_otp.plugins.otp_static.models import StaticDevice, StaticToken
from django_otp.plugins.otp_totp.models import TOTPDevice
from django_otp_webauthn.models import WebAuthnCredential

from . import access, audit, checkpoints, timestamps, twofactor
from .access import Role
from .models import (
    AccessRequest,
    AuditCheckpoint,
    AuditEntry,
    Case,
    EnrolmentCode,
    GrantRequest,
    Membership,
    SecondFactorReset,
    UserSession,
)


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


# Actions by which an admin may hold an account's password or second factor: creating
# it (they chose its password), issuing its enrolment code, or approving its recovery
# (the recovery code, which stands in for the password, is handed to that admin).
_TAKES_HOLD_OF_ACCOUNT = (
    "user.create",
    "auth.enrolment_code_issue",
    "auth.recovery_code_issue",
)


def holders(user: Any):
    """The ids of every account that may hold ``user``'s password or second factor
    (created, enrolled or recovered it). Read from the audit log, which nobody can edit.
    The one answer to "who holds whom" (docs/decisions/0005)."""
    return AuditEntry.objects.filter(
        actor__isnull=False,
        action__in=_TAKES_HOLD_OF_ACCOUNT,
        target_type=f"{user._meta.app_label}.{user._meta.model_name}",
        target_id=str(user.pk),
    ).values("actor_id")


def holds(actor: Any, user: Any) -> bool:
    """Did ``actor`` create ``user``'s account, issue its enrolment code or approve its
    recovery? Then ``actor`` may sign in as ``user``: the two are one person to the rule."""
    if actor is None or user is None or actor.pk == user.pk:
        return False
    return holders(user).filter(actor_id=actor.pk).exists()


def held_by_another_admin(actor: Any, user: Any) -> bool:
    """Whether an admin other than ``actor`` (and ``user``) holds ``user``."""
    return (
        access.system_admins()
        .exclude(pk__in=[actor.pk, user.pk])
        .filter(pk__in=holders(user))
        .exists()
    )


def check_not_held(*, approver: Any, asker: Any = None, grantee: Any = None) -> None:
    """Refuse an approval by an admin who holds the account it gives access to, or whom
    the asker (or that account) holds: one person would approve their own request."""
    if grantee is not None and holds(approver, grantee):
        raise ValidationError(
            _(
                "You created, enrolled or recovered this account: you cannot approve its "
                "access. Another admin decides."
            )
        )
    for other in (asker, grantee):
        if other is not None and holds(other, approver):
            raise ValidationError(
                _(
                    "Your account was created, enrolled or recovered by %(name)s: an account "
                    "they hold cannot approve their requests. Another admin decides."
                )
                % {"name": other.get_username()}
            )


def second_admin_needed(actor: Any, case: Case, user: Any, role: str) -> list[str]:
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


def _sole_admin(actor: Any, user: Any) -> bool:
    """No other admin could approve: none but ``actor`` and the account concerned."""
    return not access.system_admins().exclude(pk__in=[actor.pk, user.pk]).exists()


class SecondAdminNeeded(ValidationError):
    """The grant must be asked for (``grant_or_ask``) and approved by another admin."""

    def __init__(self, why: list[str]):
        super().__init__(
            _("This grant needs a second admin: it waits for another admin's approval.")
        )
        self.why = why


def _check_grant(actor: Any, case: Case, user: Any, role: str, expires_at) -> None:
    if actor is not None and actor.pk == user.pk:
        raise ValidationError(_("Nobody can grant access to themselves; ask for it instead."))
    access.check_role_allowed(user, role)
    _check_expiry(expires_at)


def _grant(actor: Any, case: Case, user: Any, role: str, expires_at, **details: Any):
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
    actor: Any,
    case: Case,
    user: Any,
    role: str,
    expires_at: datetime | None = None,
) -> Membership:
    """Give ``user`` a role in ``case``. An unrevoked membership is replaced by revoking it.

    Nobody grants access to themselves: an admin who must read a case asks, and a lead
    of the case or another admin decides (least privilege, four eyes). A grant that
    needs a second admin (``second_admin_needed``) raises ``SecondAdminNeeded``: ask for
    it with ``grant_or_ask``. With no other admin to ask it is made at once, and its
    entry says so (``sole_admin``).
    """
    _check_grant(actor, case, user, role, expires_at)
    why = second_admin_needed(actor, case, user, role)
    details: dict[str, Any] = {}
    if why:
        if not _sole_admin(actor, user):
            raise SecondAdminNeeded(why)
        details = {"sole_admin": True, "second_admin_needed": why}
    with transaction.atomic():
        return _grant(actor, case, user, role, expires_at, **details)


def grant_or_ask(
    *,
    actor: Any,
    case: Case,
    user: Any,
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


def _ask_grant(actor: Any, *, case, user, role, expires_at, why, note="", **links) -> GrantRequest:
    with transaction.atomic():
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


def decide_grant(*, actor: Any, request: GrantRequest, approve: bool) -> Membership | None:
    """Another admin approves (the grant or change is made, as theirs) or refuses; whoever
    asked may withdraw (``approve`` False). Returns the membership when approved."""
    if not access.is_system_admin(actor):
        raise PermissionDenied
    with transaction.atomic():
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
        details = {"grant_request": request.pk, "asked_by": request.requested_by.get_username()}
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
            _close_access_request(
                actor, request.access_request, membership, request.role, request.expires_at
            )
    return membership


def update_membership(
    *, actor: Any, membership: Membership, role: str, expires_at: datetime | None
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
    details: dict[str, Any] = {}
    if why:
        if not _sole_admin(actor, membership.user):
            raise SecondAdminNeeded(why)
        details = {"sole_admin": True, "second_admin_needed": why}
    with transaction.atomic():
        return _change(actor, membership, role, expires_at, **details)


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


# Two factors -------------------------------------------------------------------------


def start_totp_enrolment(*, user: Any, device_id: int | None = None) -> TOTPDevice:
    """The unconfirmed authenticator-app device of this enrolment (``device_id``, kept in
    the signing-in session), or a new one.

    Each enrolment gets its own key, and starting one discards the others: a key shown
    to whoever once typed the password never becomes the key the user confirms later.
    """
    with transaction.atomic():
        device = TOTPDevice.objects.filter(pk=device_id, user=user, confirmed=False).first()
        if device is None:
            TOTPDevice.objects.filter(user=user, confirmed=False).delete()
            device = TOTPDevice.objects.create(user=user, name="app", confirmed=False)
    return device


# No 0/O, 1/I/L: read aloud or copied from paper without doubt. 16 of 31 signs: 79 bits.
_ENROLMENT_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"


def _enrolment_digest(code: str) -> str:
    return hashlib.sha256(re.sub(r"[\s-]+", "", code or "").upper().encode()).hexdigest()


def issue_enrolment_code(*, actor: Any, user: Any, recovery: bool = False) -> tuple[str, datetime]:
    """A new one-time code with which ``user`` may set up a second factor; any earlier
    unused one stops working. Returns the code (shown once, never stored) and its expiry.

    A ``recovery`` code (a forgotten password, see ``ask_second_factor_reset``) is entered
    on the sign-in page instead of the password, then sets up the second factor too.
    """
    code = "-".join(
        "".join(secrets.choice(_ENROLMENT_ALPHABET) for _ in range(4)) for _ in range(4)
    )
    expires_at = timezone.now() + timedelta(hours=settings.ATHAR_ENROLMENT_CODE_HOURS)
    with transaction.atomic():
        EnrolmentCode.objects.filter(user=user, used_at__isnull=True).delete()
        EnrolmentCode.objects.create(
            user=user,
            digest=_enrolment_digest(code),
            issued_by=actor,
            expires_at=expires_at,
            recovery=recovery,
        )
        audit.record(
            actor,
            "auth.recovery_code_issue" if recovery else "auth.enrolment_code_issue",
            target=user,
            expires_at=expires_at.isoformat(),
        )
    return code, expires_at


def _usable_enrolment_codes(user: Any):
    return EnrolmentCode.objects.filter(
        user=user, used_at__isnull=True, expires_at__gt=timezone.now()
    )


def find_enrolment_code(user: Any, code: str, *, recovery: bool = False) -> EnrolmentCode | None:
    """The unused, unexpired enrolment code of ``user`` that ``code`` is, or None.

    A recovery code is found only as one (on the recovery page, in place of the
    password), and an ordinary enrolment code never is (it follows a password)."""
    return (
        _usable_enrolment_codes(user)
        .filter(digest=_enrolment_digest(code), recovery=recovery)
        .first()
    )


def recovery_code_usable(user: Any, pk: int) -> bool:
    """Whether the recovery code ``pk`` of ``user`` is still unused and unexpired (not
    replaced by a newer code either)."""
    return _usable_enrolment_codes(user).filter(pk=pk, recovery=True).exists()


def _new_backup_codes(user: Any) -> list[str]:
    StaticDevice.objects.filter(user=user).delete()
    device = StaticDevice.objects.create(user=user, name=twofactor.BACKUP_DEVICE_NAME)
    codes = [StaticToken.random_token() for _ in range(settings.ATHAR_BACKUP_CODES)]
    StaticToken.objects.bulk_create(StaticToken(device=device, token=c) for c in codes)
    return codes


class EnrolmentCodeSpent(ValidationError):
    """The enrolment code was used or replaced since it was entered, or it expired."""


def confirm_totp_device(
    *,
    user: Any,
    device: TOTPDevice,
    code: str,
    enrolment_code: int,
    new_password: str | None = None,
) -> list[str]:
    """Confirm an authenticator app with a code it shows; returns fresh backup codes.

    ``enrolment_code``, the id of the one the user entered, is spent in the same
    transaction: the device is confirmed only if it was still unused and unexpired.
    At the end of a recovery, ``new_password`` (the hash of the password the user chose
    after entering their recovery code) becomes the account's password in that same
    transaction: a recovery is done whole or not at all, and its code serves once.
    """
    if device.user_id != user.pk or device.confirmed:
        raise ValidationError(_("This enrolment is no longer valid; start again."))
    with transaction.atomic():
        device = TOTPDevice.objects.select_for_update().get(pk=device.pk)
        if not device.verify_token(re.sub(r"\s+", "", code or "")):
            raise ValidationError(_("The code is wrong or has expired."))
        spent = (
            _usable_enrolment_codes(user)
            .filter(pk=enrolment_code, recovery=new_password is not None)
            .update(used_at=timezone.now())
        )
        if spent != 1:
            raise EnrolmentCodeSpent(
                _("The enrolment code is no longer valid; ask an admin for a new one.")
            )
        if new_password is not None:
            type(user).objects.filter(pk=user.pk).update(password=new_password)
            user.password = new_password  # login() keys the session to the new password
            audit.record(user, "auth.password_recover_use", target=user)
        device.confirmed = True
        device.save(update_fields=["confirmed"])
        codes = _new_backup_codes(user)
        audit.record(user, "auth.2fa_enrol", target=user, device="totp")
    return codes


def regenerate_backup_codes(*, user: Any) -> list[str]:
    """Replace the user's backup codes; the old ones stop working at once."""
    with transaction.atomic():
        codes = _new_backup_codes(user)
        audit.record(user, "auth.backup_codes_renew", target=user)
    return codes


def reset_second_factor(
    *, actor: Any, user: Any, password: bool = False, **details: Any
) -> tuple[str, datetime]:
    """Remove a user's devices (lost phone). The user sets up a new one at their next
    sign-in with the enrolment code returned here, which the admin hands over.

    With ``password`` (forgotten), the password is made unusable too and the code is a
    recovery code: on the sign-in page it stands in for the password once, and the user
    chooses a new password, then sets up a new authenticator, before reaching anything.
    A recovery always covers both factors (docs/decisions/0003).

    In the app, only as decided through ``ask_second_factor_reset`` (four eyes); also used
    by whoever runs the server's shell."""
    with transaction.atomic():
        TOTPDevice.objects.filter(user=user).delete()
        StaticDevice.objects.filter(user=user).delete()
        WebAuthnCredential.objects.filter(user=user).delete()
        if password:
            user.set_unusable_password()
            type(user).objects.filter(pk=user.pk).update(password=user.password)
        _end_sessions(user)
        audit.record(
            actor,
            "auth.password_recover_approve" if password else "auth.2fa_reset",
            target=user,
            **details,
        )
        return issue_enrolment_code(actor=actor, user=user, recovery=password)


def code_needs_two_admins(user: Any) -> bool:
    """Whether an enrolment code for ``user`` takes a second admin's approval: for an
    account with case access, or an admin's. Handed a code and given a password, one admin
    could otherwise take over an account with no device yet (a new colleague already
    granted access, or one whose reset was just approved) and act as them. A new account
    with no access yet gets its first code from one admin."""
    return (
        access.is_system_admin(user)
        or Membership.objects.filter(access.active_membership_q(), user=user).exists()
    )


def ask_second_factor_reset(
    *, actor: Any, user: Any, reason: str, password: bool = False
) -> tuple[SecondFactorReset, tuple[str, datetime] | None]:
    """An admin asks to reset a user's second factor (a lost phone), with the reason;
    with ``password``, the password too (forgotten: a recovery, see
    ``reset_second_factor``).

    Another admin decides (``decide_second_factor_reset``): a reset and a password set in
    the admin would otherwise let one admin sign in as anyone. With no other admin to ask,
    it is done at once, and the entry says so. Returns the request and, when it was done,
    the enrolment code (or recovery code) and its expiry, for the admin who approved:
    never for the one who asked, unless there is no other.
    """
    if not access.is_system_admin(actor):
        raise PermissionDenied
    reason = reason.strip()
    if len(reason) < 5:
        raise ValidationError(_("Say why the second factor must be reset."))
    # The user concerned, if an admin, counts: they may approve a reset someone else asked.
    sole = not access.system_admins().exclude(pk=actor.pk).exists()
    with transaction.atomic():
        try:
            with transaction.atomic():
                request = SecondFactorReset.objects.create(
                    user=user, requested_by=actor, reason=reason[:1000], password=password
                )
        except IntegrityError:
            raise ValidationError(
                _("A reset of this user's second factor is already waiting for a decision.")
            ) from None
        audit.record(
            actor,
            "auth.password_recover_ask" if password else "auth.2fa_reset_ask",
            target=user,
            request=request.pk,
            reason=request.reason,
        )
        if not sole:
            return request, None
        return request, _approve_reset(actor, request, sole_admin=True)


def decide_second_factor_reset(
    *, actor: Any, request: SecondFactorReset, approve: bool
) -> tuple[str, datetime] | None:
    """Another admin approves (the reset is done, and the enrolment code returned to them
    to hand over) or refuses; whoever asked may withdraw (``approve`` False)."""
    if not access.is_system_admin(actor):
        raise PermissionDenied
    with transaction.atomic():
        request = SecondFactorReset.objects.select_for_update().get(pk=request.pk)
        if request.outcome != SecondFactorReset.Outcome.PENDING:
            raise ValidationError(_("This reset has been decided already."))
        asked_by_actor = actor.pk == request.requested_by_id
        if approve and asked_by_actor:
            raise ValidationError(_("Another admin decides, not whoever asked."))
        if approve:
            check_not_held(approver=actor, asker=request.requested_by)
            return _approve_reset(actor, request, sole_admin=False)
        outcome = (
            SecondFactorReset.Outcome.CANCELLED
            if asked_by_actor
            else SecondFactorReset.Outcome.REFUSED
        )
        SecondFactorReset.objects.filter(pk=request.pk).update(
            outcome=outcome, decided_by=actor, decided_at=timezone.now()
        )
        kind = "password_recover" if request.password else "2fa_reset"
        audit.record(actor, f"auth.{kind}_{outcome}", target=request.user, request=request.pk)
    return None


def _approve_reset(actor: Any, request: SecondFactorReset, *, sole_admin: bool):
    SecondFactorReset.objects.filter(pk=request.pk).update(
        outcome=SecondFactorReset.Outcome.APPROVED, decided_by=actor, decided_at=timezone.now()
    )
    return reset_second_factor(
        actor=actor,
        user=request.user,
        password=request.password,
        request=request.pk,
        asked_by=request.requested_by.get_username(),
        sole_admin=sole_admin,
    )


# Sessions ----------------------------------------------------------------------------


def start_user_session(*, user: Any, session_key: str, ip: str | None, user_agent: str) -> None:
    """Remember a new signed-in session (the sign-in itself is audited by its signal)."""
    UserSession.objects.update_or_create(
        session_key=session_key,
        defaults={
            "user": user,
            "last_seen_at": timezone.now(),
            "ended_at": None,
            "ip": ip,
            "user_agent": (user_agent or "")[:300],
        },
    )


def _end_sessions(user: Any, keep: str | None = None) -> int:
    store = import_module(settings.SESSION_ENGINE).SessionStore
    open_sessions = UserSession.objects.filter(user=user, ended_at__isnull=True)
    if keep:
        open_sessions = open_sessions.exclude(session_key=keep)
    keys = list(open_sessions.values_list("session_key", flat=True))
    for key in keys:
        store(session_key=key).delete()
    open_sessions.update(ended_at=timezone.now())
    return len(keys)


def end_user_sessions(*, actor: Any, user: Any, keep: str | None = None) -> int:
    """Sign ``user`` out everywhere (but the session ``keep``); returns how many ended."""
    with transaction.atomic():
        count = _end_sessions(user, keep=keep)
        audit.record(actor, "auth.sessions_end", target=user, count=count)
    return count


def deactivate_user(*, actor: Any, user: Any) -> None:
    """Close an account: no sign-in, no case. Memberships and history stay as they are."""
    if user.pk == getattr(actor, "pk", None):
        raise ValidationError(_("You cannot deactivate your own account."))
    with transaction.atomic():
        type(user).objects.filter(pk=user.pk).update(is_active=False)
        user.is_active = False
        _end_sessions(user)
        audit.record(actor, "user.deactivate", target=user)


# Access requests ---------------------------------------------------------------------


def request_access(*, user: Any, case: Case, reason: str) -> AccessRequest:
    """Ask to join ``case``. One pending request per user and case."""
    reason = (reason or "").strip()
    if not reason:
        raise ValidationError({"reason": _("Say why you need access.")})
    with transaction.atomic():
        pending = AccessRequest.objects.filter(
            user=user, case=case, status=AccessRequest.Status.PENDING
        ).first()
        if pending is not None:
            return pending
        req = AccessRequest.objects.create(user=user, case=case, reason=reason)
        audit.record(user, "access.request", target=req, case=case, reason=reason)
    return req


def can_decide(actor: Any, access_request: AccessRequest) -> bool:
    return access.can(actor, access.Action.MANAGE_MEMBERS, access_request.case)


def decide_access_request(
    *,
    actor: Any,
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
    with transaction.atomic():
        req = AccessRequest.objects.select_for_update().get(pk=access_request.pk)
        if req.status != AccessRequest.Status.PENDING:
            raise ValidationError(_("This request has already been decided."))
        if approve:
            try:
                membership = grant_membership(
                    actor=actor, case=req.case, user=req.user, role=role, expires_at=expires_at
                )
            except SecondAdminNeeded as needed:
                # The request stays pending until another admin approves the grant.
                access_request.pending_grant = _ask_grant(
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


def touch_user_session(*, session_key: str | None) -> None:
    """Note that a session is in use (for the admins' list of active sessions)."""
    if session_key:
        UserSession.objects.filter(session_key=session_key).update(last_seen_at=timezone.now())


def close_user_session(*, session_key: str | None) -> None:
    """Mark a session ended (it was signed out, timed out, or lost its second factor)."""
    if session_key:
        UserSession.objects.filter(session_key=session_key, ended_at__isnull=True).update(
            ended_at=timezone.now()
        )


# Audit checkpoints ---------------------------------------------------------------------


def create_audit_checkpoint(*, actor: Any = None) -> tuple[AuditCheckpoint, dict | None]:
    """Sign the Merkle root of every audit entry so far and store it.

    Returns the checkpoint and, when there is an earlier one, the consistency proof from
    it. Entries are committed in ``seq`` order and never change, so one read gives a
    prefix of the log and no lock is held while signing or asking the timestamp
    authority (``ATHAR_TSA_URL``). The checkpoint itself is then audited, as the next
    entry (outside the tree it signs).
    """
    key = checkpoints.signing_key()
    leaves = checkpoints.stored_leaves()
    if not leaves:
        raise ValidationError(_("The audit log is empty: nothing to sign."))
    size, root = checkpoints.root_of(leaves)
    row = AuditCheckpoint.objects.filter(size=size).first()
    if row is None:
        signed = checkpoints.SignedCheckpoint(settings.ATHAR_CHECKPOINT_ORIGIN, size, root)
        reply = b""
        if settings.ATHAR_TSA_URL:
            reply = timestamps.request_timestamp(settings.ATHAR_TSA_URL, signed.text().encode())
        try:
            row = _store_checkpoint(actor, signed, key, reply)
        except IntegrityError:  # a concurrent run stored this size first
            row = AuditCheckpoint.objects.get(size=size)
    previous = AuditCheckpoint.objects.filter(size__lt=size).order_by("-size").first()
    consistency = None
    if previous is not None:
        proof = checkpoints.consistency_proof(leaves, previous.size, size)
        consistency = {
            "size": previous.size,
            "root": previous.root,
            "proof": [p.hex() for p in proof],
        }
    return row, consistency


def _store_checkpoint(actor: Any, signed: Any, key: Any, reply: bytes) -> AuditCheckpoint:
    size, root = signed.size, signed.root
    with transaction.atomic():
        row = AuditCheckpoint.objects.create(
            size=size,
            root=root.hex(),
            origin=signed.origin,
            signed_text=signed.text(),
            signature=base64.b64encode(checkpoints.sign(signed, key)).decode(),
            public_key=checkpoints.public_pem(key.public_key()),
            timestamp_reply=base64.b64encode(reply).decode(),
        )
        audit.record(
            actor,
            "audit.checkpoint",
            target=row,
            size=size,
            root=root.hex(),
            timestamped=bool(reply),
        )
    return row
