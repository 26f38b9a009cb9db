"""Audit receivers for Django's authentication signals (login, failed login, logout)."""

from django.contrib.auth.signals import user_logged_in, user_logged_out, user_login_failed
from django.dispatch import receiver

from . import audit


@receiver(user_logged_in, dispatch_uid="athar_audit_login")
def _record_login(sender, request, user, **kwargs):
    audit.record(user, "auth.login", target=user)


@receiver(user_login_failed, dispatch_uid="athar_audit_login_failed")
def _record_login_failed(sender, credentials, request=None, **kwargs):
    # Only the name that was typed; Django has already masked the password.
    audit.record(None, "auth.login_failed", username=str(credentials.get("username", ""))[:150])


@receiver(user_logged_out, dispatch_uid="athar_audit_logout")
def _record_logout(sender, request, user, **kwargs):
    if user is not None:
        audit.record(user, "auth.logout", target=user)
