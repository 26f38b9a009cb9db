"""Audit receivers for Django's authentication signals (login, failed login, logout).

A sign-in also starts the session's clocks (idle timeout, absolute lifetime) and records
the session so that admins can list it and the user can end it from elsewhere.
"""

import hashlib
import hmac
import time

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.signals import user_logged_in, user_logged_out, user_login_failed
from django.dispatch import receiver

from casefiles import audit
from casefiles.netaddr import client_ip

from . import services
from .middleware import SESSION_SEEN, SESSION_STARTED


@receiver(user_logged_in, dispatch_uid="athar_audit_login")
def _record_login(sender, request, user, **kwargs):
    device = getattr(user, "otp_device", None)
    audit.record(
        user, "auth.login", target=user, second_factor=type(device).__name__ if device else None
    )
    session = getattr(request, "session", None)
    if session is not None:
        now = int(time.time())
        session[SESSION_STARTED] = session[SESSION_SEEN] = now
        if session.session_key is None:
            session.save()
        services.start_user_session(
            user=user,
            session_key=session.session_key,
            ip=client_ip(request),
            user_agent=request.META.get("HTTP_USER_AGENT", ""),
        )


@receiver(user_login_failed, dispatch_uid="athar_audit_login_failed")
def _record_login_failed(sender, credentials, request=None, **kwargs):
    # Django has already masked the password. A name that is no account may well be a
    # password typed in the wrong field, and the log keeps everything for ever: such a
    # name is kept as a keyed digest (repeated guesses still show as one name).
    typed = str(credentials.get("username", ""))[:150]
    if get_user_model().objects.filter(username=typed).exists():
        audit.record(None, "auth.login_failed", username=typed)
    else:
        digest = hmac.new(settings.SECRET_KEY.encode(), typed.encode(), hashlib.sha256)
        audit.record(None, "auth.login_failed", unknown_username_hmac=digest.hexdigest()[:32])


@receiver(user_logged_out, dispatch_uid="athar_audit_logout")
def _record_logout(sender, request, user, **kwargs):
    if user is not None:
        audit.record(user, "auth.logout", target=user)
    session = getattr(request, "session", None)
    if session is not None:
        services.close_user_session(session_key=session.session_key)
