"""Disclosure packages: a request for a selection of a case's evidence and testimony to go
to a named recipient for a purpose, its four-eyes decision, and the bag built from it.

``requested → approved → building → ready | failed``, or ``refused``, or ``withdrawn``.
What goes in is frozen when the package is approved (``contents``) and checked again when
it is built (``disclosure/services``).
"""

from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.db import models
from django.urls import reverse
from django.utils.translation import gettext_lazy as _

from casefiles.querysets import CaseScopedQuerySet
from people.models import ConsentScope

# The identity fields a package may carry by name (never contact details or risk notes).
NAMEABLE_FIELDS = ("name_ar", "name_latin")


class Package(models.Model):
    class Status(models.TextChoices):
        REQUESTED = "requested", _("Requested")
        APPROVED = "approved", _("Approved")
        BUILDING = "building", _("Building")
        READY = "ready", _("Ready")
        FAILED = "failed", _("Failed")
        REFUSED = "refused", _("Refused")
        WITHDRAWN = "withdrawn", _("Withdrawn")

    class Selection(models.TextChoices):
        ALL = "all", _("Everything in the case")
        CHOSEN = "chosen", _("Chosen items and testimonies")
        SEARCH = "search", _("A saved search")
        ELEMENT = "element", _("The evidence supporting a legal element")

    case = models.ForeignKey("casefiles.Case", models.PROTECT, related_name="+")
    requested_by = models.ForeignKey(settings.AUTH_USER_MODEL, models.PROTECT, related_name="+")
    requested_at = models.DateTimeField(auto_now_add=True)
    recipient = models.CharField(_("recipient"), max_length=200)
    recipient_reference = models.CharField(
        _("the recipient's case reference"), max_length=200, blank=True
    )
    purpose = models.CharField(_("purpose"), max_length=16, choices=ConsentScope.choices)
    selection_kind = models.CharField(
        _("selection"), max_length=16, choices=Selection.choices, default=Selection.ALL
    )
    chosen = models.JSONField(default=list, blank=True)  # references: EV-… and T-…
    search = models.ForeignKey(
        "legal.SavedSearch", models.PROTECT, null=True, blank=True, related_name="+"
    )
    element = models.ForeignKey(
        "legal.LegalElement", models.PROTECT, null=True, blank=True, related_name="+"
    )
    # Identity fields the request asks to give by name, and those the approver allowed.
    named_fields = models.JSONField(default=list, blank=True)
    allowed_fields = models.JSONField(default=list, blank=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.REQUESTED)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, models.PROTECT, null=True, blank=True, related_name="+"
    )
    decided_at = models.DateTimeField(null=True, blank=True)
    reason = models.TextField(_("reason"), blank=True)  # of a refusal or a withdrawal
    # Frozen at approval: {"items": [pk, ...], "testimonies": [pk, ...]}.
    contents = models.JSONField(default=dict, blank=True)
    total = models.IntegerField(default=0)
    done = models.IntegerField(default=0)
    error = models.TextField(blank=True)
    built_at = models.DateTimeField(null=True, blank=True)
    sha256 = models.CharField(max_length=64, blank=True)  # of the package's tar file
    size = models.BigIntegerField(null=True, blank=True)
    tagmanifest_sha256 = models.CharField(max_length=64, blank=True)

    objects = CaseScopedQuerySet.as_manager()

    class Meta:
        ordering = ["-requested_at", "-pk"]
        verbose_name = _("disclosure package")
        verbose_name_plural = _("disclosure packages")

    def __str__(self) -> str:
        return self.code

    def get_absolute_url(self) -> str:
        return reverse("disclosure:package", args=[self.case.reference, self.pk])

    @property
    def code(self) -> str:
        return f"PKG-{self.pk:04d}" if self.pk else "PKG-new"

    @property
    def progress(self) -> int:
        return min(100, round(100 * self.done / self.total)) if self.total else 0

    @property
    def stored_path(self) -> Path:
        """Where the built package's tar file is kept, to be issued again byte for byte."""
        return Path(settings.DATA_DIR) / "disclosure" / f"{self.code}.tar"


class Redaction(models.Model):
    """A copy of an item's picture with rectangles an investigator drew filled in black
    (faces, name tags): what goes into a package where consent or protection keeps the
    original out. The original is untouched; the copy names its original's hash, the
    regions (in the original's pixels) and who made it. Never changed."""

    case = models.ForeignKey("casefiles.Case", models.PROTECT, related_name="+")
    item = models.ForeignKey("evidence.EvidenceItem", models.PROTECT, related_name="redactions")
    original_sha256 = models.CharField(max_length=64)
    regions = models.JSONField()  # [[left, top, width, height], ...]
    reason = models.TextField(_("reason"))
    made_by = models.ForeignKey(settings.AUTH_USER_MODEL, models.PROTECT, related_name="+")
    made_at = models.DateTimeField(auto_now_add=True)
    sha256 = models.CharField(max_length=64)
    size = models.IntegerField()
    storage_key = models.CharField(max_length=100)
    tool = models.CharField(max_length=100)

    objects = CaseScopedQuerySet.as_manager()

    class Meta:
        ordering = ["made_at", "pk"]

    def __str__(self) -> str:
        return f"redaction #{self.pk}"

    def save(self, *args, **kwargs) -> None:
        if not self._state.adding:
            raise TypeError("Redactions are never changed: draw a new one.")
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        raise TypeError("Redactions are never deleted.")
