"""The reads of accounts: sign-in's lookups, a user's own security page, and the admins'
pages of users. No case content is here; what an admin sees of a user's memberships
comes through ``casefiles.reads`` (the memberships they manage)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.contrib.auth import get_user_model
from django.db.models import Count, Q, QuerySet
from django.http import Http404
from django.utils import timezone
from django_otp.plugins.otp_static.models import StaticToken
from django_otp.plugins.otp_totp.models import TOTPDevice
from django_otp_webauthn.models import WebAuthnCredential

from casefiles import reads as case_reads

from .models import SecondFactorReset, UserSession

if TYPE_CHECKING:
    from django.contrib.auth.models import User as Account


def _accounts() -> QuerySet:
    return get_user_model()._default_manager.all()


def active_account(pk: Any) -> Account | None:
    """The active account ``pk`` (a sign-in in progress names it), or None."""
    return _accounts().filter(pk=pk, is_active=True).first()


def active_account_named(username: str) -> Account | None:
    return (
        _accounts().filter(**{get_user_model().USERNAME_FIELD: username, "is_active": True}).first()
    )


def open_sessions(user: Account) -> QuerySet:
    """The user's sessions not yet ended."""
    return UserSession.objects.filter(user=user, ended_at__isnull=True)


def backup_codes_left(user: Account) -> int:
    return StaticToken.objects.filter(device__user=user).count()


def security_keys(user: Account) -> QuerySet:
    return WebAuthnCredential.objects.filter(user=user, confirmed=True)


# The admins' pages of users (the caller checks the reader is a system admin).


def users_with_memberships() -> QuerySet[Account]:
    """Every account, by username, with the number of its memberships in force."""
    now = timezone.now()
    return (
        _accounts()
        .order_by("username")
        .annotate(
            n_memberships=Count(
                "case_memberships",
                filter=Q(case_memberships__revoked_at__isnull=True)
                & (
                    Q(case_memberships__expires_at__isnull=True)
                    | Q(case_memberships__expires_at__gt=now)
                ),
                distinct=True,
            ),
        )
    )


def enrolled_user_ids() -> set[int]:
    """The accounts with a confirmed second factor (an authenticator or a security key)."""
    return set(TOTPDevice.objects.filter(confirmed=True).values_list("user_id", flat=True)) | set(
        WebAuthnCredential.objects.filter(confirmed=True).values_list("user_id", flat=True)
    )


def get_account(pk: int) -> Account:
    """The account ``pk`` (active or not); 404."""
    found = _accounts().filter(pk=pk).first()
    if found is None:
        raise Http404
    return found


def memberships_of(reader: Account, subject: Account) -> QuerySet:
    """The memberships of ``subject`` that ``reader`` manages, newest first."""
    return (
        case_reads.manageable_memberships(reader)
        .filter(user=subject)
        .select_related("case", "granted_by", "revoked_by")
        .order_by("-granted_at")
    )


def pending_reset(subject: Account) -> SecondFactorReset | None:
    return (
        SecondFactorReset.objects.filter(user=subject, outcome=SecondFactorReset.Outcome.PENDING)
        .select_related("requested_by")
        .first()
    )


def get_reset(subject: Account, pk: int) -> SecondFactorReset:
    """A second-factor reset asked for ``subject``; 404."""
    found = SecondFactorReset.objects.filter(pk=pk, user=subject).first()
    if found is None:
        raise Http404
    return found
