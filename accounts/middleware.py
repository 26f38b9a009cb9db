"""Sessions: a signed-in session without a second factor, idle or too old is ended."""

import time

from django.conf import settings
from django.contrib.auth.models import AnonymousUser

from casefiles import audit

from . import services, twofactor

SESSION_STARTED = "athar_started"
SESSION_SEEN = "athar_seen"
# Record activity at most this often (seconds): one write a minute, not one per request.
_TOUCH_EVERY = 60


class SessionPolicyMiddleware:
    """End a signed-in session that lacks a second factor, is idle or too old.

    Runs after django-otp's middleware (which tells whether the session was verified
    with a device) and before LoginRequiredMiddleware, which then sends the now
    anonymous request to the sign-in page. Whatever signed the session in (a password
    reset, a forgotten code path), a session without a verified device is not kept.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        user = request.user
        if user.is_authenticated:
            now = int(time.time())
            reason = self._reason(request, user, now)
            if reason:
                self._end(request, user, reason)
            elif now - request.session.get(SESSION_SEEN, 0) >= _TOUCH_EVERY:
                request.session[SESSION_SEEN] = now
                services.touch_user_session(session_key=request.session.session_key)
        return self.get_response(request)

    @staticmethod
    def _reason(request, user, now: int) -> str:
        if not (user.is_verified() or twofactor.is_exempt(user)):
            return "no_second_factor"
        started = request.session.get(SESSION_STARTED, 0)
        if now - started > settings.ATHAR_SESSION_MAX_SECONDS:
            return "lifetime"
        if now - request.session.get(SESSION_SEEN, started) > settings.ATHAR_SESSION_IDLE_SECONDS:
            return "idle"
        return ""

    @staticmethod
    def _end(request, user, reason: str) -> None:
        key = request.session.session_key
        audit.record(user, "auth.session_end", target=user, reason=reason)
        services.close_user_session(session_key=key)
        request.session.flush()
        request.user = AnonymousUser()
