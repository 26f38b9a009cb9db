"""Enrolment codes: the one-time codes without which a password alone sets up no second
factor (and recovery codes, which stand in for a forgotten password once)."""

from __future__ import annotations

import hashlib
import re
import secrets
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from casefiles import access, audit
from casefiles.models import Membership

from ..models import EnrolmentCode

if TYPE_CHECKING:
    from django.contrib.auth.models import User as Account

# No 0/O, 1/I/L: read aloud or copied from paper without doubt. 16 of 31 signs: 79 bits.
_ENROLMENT_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"


def _enrolment_digest(code: str) -> str:
    return hashlib.sha256(re.sub(r"[\s-]+", "", code or "").upper().encode()).hexdigest()


def issue_enrolment_code(
    *, actor: Account | None, user: Account, recovery: bool = False
) -> tuple[str, datetime]:
    """A new one-time code with which ``user`` may set up a second factor; any earlier
    unused one stops working. Returns the code (shown once, never stored) and its expiry.

    A ``recovery`` code (a forgotten password, see ``ask_second_factor_reset``) is entered
    on the sign-in page instead of the password, then sets up the second factor too.
    """
    with transaction.atomic(durable=True):
        return issue_code_within(actor=actor, user=user, recovery=recovery)


def issue_code_within(
    *, actor: Account | None, user: Account, recovery: bool
) -> tuple[str, datetime]:
    """``issue_enrolment_code`` inside a service's transaction already open (a reset)."""
    code = "-".join(
        "".join(secrets.choice(_ENROLMENT_ALPHABET) for _ in range(4)) for _ in range(4)
    )
    expires_at = timezone.now() + timedelta(hours=settings.ATHAR_ENROLMENT_CODE_HOURS)
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


def _usable_enrolment_codes(user: Account):
    return EnrolmentCode.objects.filter(
        user=user, used_at__isnull=True, expires_at__gt=timezone.now()
    )


def find_enrolment_code(
    user: Account, code: str, *, recovery: bool = False
) -> EnrolmentCode | None:
    """The unused, unexpired enrolment code of ``user`` that ``code`` is, or None.

    A recovery code is found only as one (on the recovery page, in place of the
    password), and an ordinary enrolment code never is (it follows a password)."""
    return (
        _usable_enrolment_codes(user)
        .filter(digest=_enrolment_digest(code), recovery=recovery)
        .first()
    )


def recovery_code_usable(user: Account, pk: int) -> bool:
    """Whether the recovery code ``pk`` of ``user`` is still unused and unexpired (not
    replaced by a newer code either)."""
    return _usable_enrolment_codes(user).filter(pk=pk, recovery=True).exists()


def code_needs_two_admins(user: Account) -> bool:
    """Whether an enrolment code for ``user`` takes a second admin's approval: for an
    account with case access, or an admin's. Handed a code and given a password, one admin
    could otherwise take over an account with no device yet (a new colleague already
    granted access, or one whose reset was just approved) and act as them. A new account
    with no access yet gets its first code from one admin."""
    return (
        access.is_system_admin(user)
        or Membership.objects.filter(access.active_membership_q(), user=user).exists()
    )
