"""Signed-in sessions: recorded at sign-in, touched, ended; and closing an account."""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from casefiles import audit

from ..models import UserSession

if TYPE_CHECKING:
    from django.contrib.auth.models import User as Account


def start_user_session(*, user: Account, session_key: str, ip: str | None, user_agent: str) -> None:
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


def _end_sessions(user: Account, keep: str | None = None) -> int:
    store = import_module(settings.SESSION_ENGINE).SessionStore
    open_sessions = UserSession.objects.filter(user=user, ended_at__isnull=True)
    if keep:
        open_sessions = open_sessions.exclude(session_key=keep)
    keys = list(open_sessions.values_list("session_key", flat=True))
    for key in keys:
        store(session_key=key).delete()
    open_sessions.update(ended_at=timezone.now())
    return len(keys)


def end_user_sessions(*, actor: Account, user: Account, keep: str | None = None) -> int:
    """Sign ``user`` out everywhere (but the session ``keep``); returns how many ended."""
    with transaction.atomic(durable=True):
        count = _end_sessions(user, keep=keep)
        audit.record(actor, "auth.sessions_end", target=user, count=count)
    return count


def deactivate_user(*, actor: Account, user: Account) -> None:
    """Close an account: no sign-in, no case. Memberships and history stay as they are."""
    if user.pk == getattr(actor, "pk", None):
        raise ValidationError(_("You cannot deactivate your own account."))
    with transaction.atomic(durable=True):
        type(user).objects.filter(pk=user.pk).update(is_active=False)
        user.is_active = False
        _end_sessions(user)
        audit.record(actor, "user.deactivate", target=user)
