"""Security keys and passkeys (WebAuthn, through django-otp-webauthn) as a second factor.

django-otp-webauthn's own authentication views either sign a user in by the key alone
(passwordless, which we switch off) or expect a user who is signed in already. Here the
user is the one named by the password step's note in the session (see signin.py), and
success goes through the same ``login()`` as a TOTP code. Registration (adding a key)
uses the library's views as they are: they require a signed-in, verified user.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.decorators import login_not_required
from django.http import HttpRequest
from django.utils.decorators import method_decorator
from django_otp_webauthn import exceptions
from django_otp_webauthn.views import (
    BeginCredentialAuthenticationView,
    CompleteCredentialAuthenticationView,
    CompleteCredentialRegistrationView,
)

from casefiles import audit


class _PendingUserMixin:
    request: HttpRequest  # set by the view it is mixed into

    def get_user(self) -> Any:
        from .signin import _pending_user

        found = _pending_user(self.request)
        return found[1] if found is not None else None

    def check_can_authenticate(self) -> None:
        if self.get_user() is None:  # no password step: nothing to second
            raise exceptions.PasswordlessLoginDisabled()


@method_decorator(login_not_required, name="dispatch")
class BeginSecondFactorView(_PendingUserMixin, BeginCredentialAuthenticationView):
    pass


@method_decorator(login_not_required, name="dispatch")
class CompleteSecondFactorView(_PendingUserMixin, CompleteCredentialAuthenticationView):
    def post(self, *args, **kwargs):
        try:
            return super().post(*args, **kwargs)
        except Exception:
            user = self.get_user()
            if user is not None:
                audit.record(None, "auth.second_factor_failed", target=user, device="webauthn")
            raise

    def complete_auth(self, device: Any) -> None:
        from .signin import _finish, _pending_user

        found = _pending_user(self.request)
        if found is None or device.user_id != found[1].pk:
            raise exceptions.CredentialUserMismatch()
        pending, user = found
        self._next = pending["next"]
        _finish(self.request, pending, user, device)

    def get_success_url(self) -> str:
        return getattr(self, "_next", None) or super().get_success_url()


class CompleteRegistrationView(CompleteCredentialRegistrationView):
    """Adding a security key, audited like any other second factor."""

    def post(self, *args, **kwargs):
        response = super().post(*args, **kwargs)
        user = self.request.user
        audit.record(user, "auth.2fa_enrol", target=user, device="webauthn")
        return response
