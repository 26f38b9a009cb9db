"""Second-factor resets and password recovery, asked by one admin and decided by
another (docs/decisions/0003)."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from django.core.exceptions import PermissionDenied, ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext as _
from django_otp.plugins.otp_static.models import StaticDevice
from django_otp.plugins.otp_totp.models import TOTPDevice
from django_otp_webauthn.models import WebAuthnCredential

from casefiles import access, audit
from casefiles.models import Membership
from casefiles.services import check_not_held

from ..models import SecondFactorReset
from .enrolment import issue_code_within
from .sessions import _end_sessions

if TYPE_CHECKING:
    from django.contrib.auth.models import User as Account


def reset_second_factor(
    *, actor: Account, user: Account, password: bool = False, **details: Any
) -> tuple[str, datetime]:
    """Remove a user's devices (lost phone). The user sets up a new one at their next
    sign-in with the enrolment code returned here, which the admin hands over.

    With ``password`` (forgotten), the password is made unusable too and the code is a
    recovery code: on the sign-in page it stands in for the password once, and the user
    chooses a new password, then sets up a new authenticator, before reaching anything.
    A recovery always covers both factors (docs/decisions/0003).

    In the app, only as decided through ``ask_second_factor_reset`` (four eyes); also used
    by whoever runs the server's shell."""
    with transaction.atomic(durable=True):
        return _reset(actor, user, password, **details)


def _reset(actor: Account, user: Account, password: bool, **details: Any) -> tuple[str, datetime]:
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
    return issue_code_within(actor=actor, user=user, recovery=password)


def ask_second_factor_reset(
    *, actor: Account, user: Account, reason: str, password: bool = False
) -> tuple[SecondFactorReset, tuple[str, datetime] | None]:
    """An admin asks to reset a user's second factor (a lost phone), with the reason;
    with ``password``, the password too (forgotten: a recovery, see
    ``reset_second_factor``).

    Another admin decides (``decide_second_factor_reset``): a reset and a password set in
    the admin would otherwise let one admin sign in as anyone. With no other admin to ask,
    it is done at once, and the entry says so, only for an account with access to no
    case (it reaches nothing, and any later grant of it waits, the admin holding it):
    for a member of a case it waits for a second admin (decision 0022). Returns the
    request and, when it was done, the enrolment code (or recovery code) and its expiry,
    for the admin who approved: never for the one who asked, unless there is no other.
    """
    if not access.is_system_admin(actor):
        raise PermissionDenied
    reason = reason.strip()
    if len(reason) < 5:
        raise ValidationError(_("Say why the second factor must be reset."))
    # The user concerned, if an admin, counts: they may approve a reset someone else asked.
    sole = not access.system_admins().exclude(pk=actor.pk).exists()
    if sole and Membership.objects.filter(access.active_membership_q(), user=user).exists():
        sole = False  # a member of a case: the reset waits for a second admin
    with transaction.atomic(durable=True):
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
    *, actor: Account, request: SecondFactorReset, approve: bool
) -> tuple[str, datetime] | None:
    """Another admin approves (the reset is done, and the enrolment code returned to them
    to hand over) or refuses; whoever asked may withdraw (``approve`` False)."""
    if not access.is_system_admin(actor):
        raise PermissionDenied
    with transaction.atomic(durable=True):
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


def _approve_reset(actor: Account, request: SecondFactorReset, *, sole_admin: bool):
    SecondFactorReset.objects.filter(pk=request.pk).update(
        outcome=SecondFactorReset.Outcome.APPROVED, decided_by=actor, decided_at=timezone.now()
    )
    return _reset(
        actor,
        request.user,
        request.password,
        request=request.pk,
        asked_by=request.requested_by.get_username(),
        sole_admin=sole_admin,
    )
