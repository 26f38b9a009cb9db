"""Accounts' own rows: signed-in sessions, enrolment codes, second-factor resets and
each user's preferences.

The first three tables were made by casefiles' migrations and keep their names."""

from typing import TYPE_CHECKING

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

if TYPE_CHECKING:
    from django.contrib.auth.models import User as Account


class UserSession(models.Model):
    """A signed-in session, recorded at sign-in so admins can list and end them.

    The session data lives in the session store; this row only names it by key, so
    "sign out everywhere" deletes exactly the user's sessions without scanning the store.
    """

    user = models.ForeignKey(settings.AUTH_USER_MODEL, models.PROTECT, related_name="+")
    session_key = models.CharField(max_length=64, unique=True)
    started_at = models.DateTimeField(auto_now_add=True)
    last_seen_at = models.DateTimeField()
    ended_at = models.DateTimeField(null=True, blank=True)
    ip = models.GenericIPAddressField(null=True, blank=True)
    user_agent = models.CharField(max_length=300, blank=True)

    class Meta:
        db_table = "casefiles_usersession"  # made before accounts had its own app
        ordering = ["-last_seen_at"]
        indexes = [models.Index(fields=["user", "ended_at"], name="usersession_user_open")]

    def __str__(self) -> str:
        return f"{self.user} · {self.started_at:%Y-%m-%d %H:%M}"


class EnrolmentCode(models.Model):
    """A one-time code an admin hands to a user, without which a password alone cannot set
    up the account's first second factor, or its next one after a reset.

    Only a digest is kept; the code itself is shown once, to whoever issued it.
    """

    user = models.ForeignKey(settings.AUTH_USER_MODEL, models.CASCADE, related_name="+")
    digest = models.CharField(max_length=64, unique=True)
    issued_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, models.PROTECT, null=True, blank=True, related_name="+"
    )
    issued_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    used_at = models.DateTimeField(null=True, blank=True)
    # A recovery code (a forgotten password, decided by two admins) stands in for the
    # password on the sign-in page, once; it never serves after a password.
    recovery = models.BooleanField(default=False)

    class Meta:
        db_table = "casefiles_enrolmentcode"
        ordering = ["-issued_at"]
        verbose_name = _("enrolment code")
        verbose_name_plural = _("enrolment codes")

    def __str__(self) -> str:
        return f"{self.user} · {self.issued_at:%Y-%m-%d %H:%M}"


class SecondFactorReset(models.Model):
    """An admin's request to reset a user's second factor, decided by another admin.

    A reset, with the enrolment code it issues, and a password set in the admin, would let
    one admin become any user (and so reveal whom that user may): four eyes, as for
    access. Where no other admin exists, the reset is done at once and its entry says so.
    """

    class Outcome(models.TextChoices):
        PENDING = "pending", _("Waiting for another admin")
        APPROVED = "approved", _("Approved")
        REFUSED = "refused", _("Refused")
        CANCELLED = "cancelled", _("Withdrawn")

    user = models.ForeignKey(settings.AUTH_USER_MODEL, models.CASCADE, related_name="+")
    reason = models.TextField(_("reason"))
    # The password too (forgotten): on approval it is made unusable and the code handed
    # over is a recovery code, with which the user chooses a new one.
    password = models.BooleanField(_("the password too"), default=False)
    requested_by = models.ForeignKey(settings.AUTH_USER_MODEL, models.PROTECT, related_name="+")
    requested_at = models.DateTimeField(auto_now_add=True)
    outcome = models.CharField(max_length=16, choices=Outcome.choices, default=Outcome.PENDING)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, models.PROTECT, null=True, blank=True, related_name="+"
    )
    decided_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        db_table = "casefiles_secondfactorreset"
        ordering = ["-requested_at"]
        verbose_name = _("second-factor reset")
        verbose_name_plural = _("second-factor resets")
        constraints = [
            models.UniqueConstraint(
                fields=["user"],
                condition=models.Q(outcome="pending"),
                name="one_pending_second_factor_reset_per_user",
            )
        ]

    def __str__(self) -> str:
        return f"{self.user} · {self.requested_at:%Y-%m-%d %H:%M} · {self.outcome}"


class Preferences(models.Model):
    """What a user chose for themselves; a user without a row has the defaults."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, models.CASCADE, primary_key=True, related_name="+"
    )
    # Graphic evidence stays blurred on every list page, even an item just revealed;
    # only the reveal on an item's own page shows its picture.
    blur_graphic = models.BooleanField(_("always blur graphic images"), default=False)

    class Meta:
        verbose_name = _("preferences")
        verbose_name_plural = _("preferences")

    def __str__(self) -> str:
        return f"preferences of {self.user}"

    @staticmethod
    def blurs_graphic(user: "Account") -> bool:
        """Whether ``user`` chose to keep graphic images blurred everywhere (one query)."""
        return Preferences.objects.filter(user_id=user.pk, blur_graphic=True).exists()
