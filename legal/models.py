"""The lawyer's records: review decisions, assessments, the legal elements of crimes and
the links that tie evidence and testimony to them.

Decisions, assessments, links and their confirmations are append-only (model and
database refuse UPDATE and DELETE) and bound into the audit chain: the current state of
anything here is read from its latest row, never overwritten.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from casefiles.querysets import CaseScopedQuerySet
from casefiles.reviewing import ReviewStatus

if TYPE_CHECKING:
    from evidence.models import EvidenceItem
    from people.models import Testimony

from .querysets import (
    CaseOwnedQuerySet,
    DecisionQuerySet,
    LinkPartQuerySet,
    SavedSearchQuerySet,
)


class AppendOnlyModel(models.Model):
    """A row that is written once: the model refuses to change or delete it."""

    class Meta:
        abstract = True

    def save(self, *args, **kwargs) -> None:
        if not self._state.adding:
            raise TypeError(f"{type(self).__name__} rows are append-only.")
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        raise TypeError(f"{type(self).__name__} rows are append-only.")


def item_field(related_name: str) -> models.ForeignKey:
    """The evidence item a row is about, when it is about one (``OnRecord``)."""
    return models.ForeignKey(
        "evidence.EvidenceItem", models.PROTECT, null=True, blank=True, related_name=related_name
    )


def testimony_field(related_name: str) -> models.ForeignKey:
    """The testimony a row is about, when it is about one (``OnRecord``)."""
    return models.ForeignKey(
        "people.Testimony", models.PROTECT, null=True, blank=True, related_name=related_name
    )


def one_record(name: str) -> models.CheckConstraint:
    """The database holds exactly one of ``item`` and ``testimony``."""
    return models.CheckConstraint(
        condition=Q(item__isnull=True) ^ Q(testimony__isnull=True), name=name
    )


class OnRecord:
    """A row about an evidence item or a testimony: exactly one of the two (its model
    declares ``item_field``, ``testimony_field`` and the ``one_record`` constraint)."""

    if TYPE_CHECKING:
        item: EvidenceItem | None
        testimony: Testimony | None
        pk: object

    @property
    def record(self) -> EvidenceItem | Testimony:
        record = self.item or self.testimony
        if record is None:
            raise ValueError(f"{type(self).__name__} {self.pk} is about nothing")
        return record


class ReviewDecision(OnRecord, AppendOnlyModel):
    """One step of the review of an evidence item or a testimony (``legal/review.py``):
    who, when, from, to, why, and the SHA-256 of what was reviewed (the original's hash
    for an item, the statement version's for a testimony)."""

    chain_bound = True  # each row's content hash is in its audit entry

    testimony = testimony_field("decisions")
    item = item_field("decisions")
    from_status = models.CharField(max_length=16, choices=ReviewStatus.choices)
    to_status = models.CharField(max_length=16, choices=ReviewStatus.choices)
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, models.PROTECT, related_name="+")
    at = models.DateTimeField(auto_now_add=True)
    comment = models.TextField(_("comment"), blank=True)
    # Blank only on the testimony decisions recorded before the hash was kept.
    sha256 = models.CharField(max_length=64, blank=True)

    objects = DecisionQuerySet.as_manager()

    class Meta:
        # The table testimony review began in: audit entries bind its rows by its name.
        db_table = "people_reviewdecision"
        ordering = ["at", "pk"]
        constraints = [one_record("decision_on_item_or_testimony")]
        indexes = [models.Index(fields=["item", "id"], name="decision_item_latest")]

    def __str__(self) -> str:
        return f"{self.item or self.testimony}: {self.from_status} → {self.to_status}"


class Crime(models.Model):
    """A crime of one instrument (the Rome Statute, a national code), or the contextual
    elements an article's crimes share. Codes are stable: links name them for good."""

    code = models.CharField(max_length=32, unique=True)  # "RS-7-1-f", "VStGB-7-1-5"
    instrument = models.CharField(_("instrument"), max_length=100)  # "Rome Statute"
    jurisdiction = models.CharField(_("jurisdiction"), max_length=32)  # "ICC", "DE"
    article = models.CharField(_("article"), max_length=32)  # "7(1)(f)"
    label_en = models.CharField(_("name in English"), max_length=200)
    label_ar = models.CharField(_("name in Arabic"), max_length=200)
    contextual = models.BooleanField(default=False)  # the elements every crime here needs
    order = models.PositiveIntegerField(default=0)
    since = models.CharField(_("catalogue version"), max_length=16)
    retired_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["order", "code"]
        verbose_name = _("crime")
        verbose_name_plural = _("crimes")

    def __str__(self) -> str:
        return f"{self.code} {self.label_en}"

    def label(self, language: str | None) -> str:
        return self.label_ar if (language or "").startswith("ar") else self.label_en


class LegalElement(models.Model):
    """One element a prosecutor must prove of a crime (or of its context). Added and
    retired by admins, never deleted; a retired element keeps its links."""

    crime = models.ForeignKey(Crime, models.PROTECT, related_name="elements")
    code = models.CharField(max_length=40, unique=True)  # "RS-7-1-f.1"
    label_en = models.TextField(_("element in English"))
    label_ar = models.TextField(_("element in Arabic"))
    order = models.PositiveIntegerField(default=0)
    since = models.CharField(_("catalogue version"), max_length=16)
    retired_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["crime__order", "crime__code", "order", "code"]
        verbose_name = _("legal element")
        verbose_name_plural = _("legal elements")

    def __str__(self) -> str:
        return self.code

    def label(self, language: str | None) -> str:
        return self.label_ar if (language or "").startswith("ar") else self.label_en


class Stance(models.TextChoices):
    SUPPORTS = "supports", _("Supports")
    CONTRADICTS = "contradicts", _("Contradicts")
    CONTEXT = "context", _("Context")


class ElementLink(OnRecord, AppendOnlyModel):
    """An item or a testimony tied to an element: its stance and the proposition in the
    lawyer's words. Counts as reviewed once a second lawyer confirms it. Never changed:
    a link made in error is withdrawn by a ``LinkWithdrawal``."""

    chain_bound = True

    case = models.ForeignKey("casefiles.Case", models.PROTECT, related_name="element_links")
    element = models.ForeignKey(LegalElement, models.PROTECT, related_name="links")
    item = item_field("links")
    testimony = testimony_field("links")
    stance = models.CharField(_("stance"), max_length=16, choices=Stance.choices)
    proposition = models.TextField(_("what it shows, in your words"))
    author = models.ForeignKey(settings.AUTH_USER_MODEL, models.PROTECT, related_name="+")
    at = models.DateTimeField(auto_now_add=True)

    objects = CaseOwnedQuerySet.as_manager()

    class Meta:
        ordering = ["at", "pk"]
        constraints = [one_record("link_to_item_or_testimony")]
        indexes = [models.Index(fields=["case", "element"], name="link_case_element")]

    def __str__(self) -> str:
        return f"{self.item or self.testimony} {self.stance} {self.element}"


class LinkConfirmation(AppendOnlyModel):
    """A second lawyer confirms a link (four eyes: never its author)."""

    chain_bound = True

    link = models.OneToOneField(ElementLink, models.PROTECT, related_name="confirmation")
    confirmed_by = models.ForeignKey(settings.AUTH_USER_MODEL, models.PROTECT, related_name="+")
    at = models.DateTimeField(auto_now_add=True)
    note = models.TextField(_("note"), blank=True)

    objects = LinkPartQuerySet.as_manager()

    def __str__(self) -> str:
        return f"{self.link_id} confirmed by {self.confirmed_by_id}"


class LinkWithdrawal(AppendOnlyModel):
    """A link withdrawn, with why: it no longer counts, and stays in the history."""

    chain_bound = True

    link = models.OneToOneField(ElementLink, models.PROTECT, related_name="withdrawal")
    withdrawn_by = models.ForeignKey(settings.AUTH_USER_MODEL, models.PROTECT, related_name="+")
    at = models.DateTimeField(auto_now_add=True)
    reason = models.TextField(_("reason"))

    objects = LinkPartQuerySet.as_manager()

    def __str__(self) -> str:
        return f"{self.link_id} withdrawn by {self.withdrawn_by_id}"


class Assessment(OnRecord, AppendOnlyModel):
    """One assessor's grading of an item or a testimony at a time. Append-only: the
    latest of each assessor is shown, several assessors side by side, never averaged."""

    chain_bound = True

    class Reliability(models.TextChoices):  # the source (Admiralty grading, letters)
        A = "A", _("A: completely reliable")
        B = "B", _("B: usually reliable")
        C = "C", _("C: fairly reliable")
        D = "D", _("D: not usually reliable")
        E = "E", _("E: unreliable")
        F = "F", _("F: reliability cannot be judged")

    class Credibility(models.TextChoices):  # the information (Admiralty grading, digits)
        C1 = "1", _("1: confirmed by other sources")
        C2 = "2", _("2: probably true")
        C3 = "3", _("3: possibly true")
        C4 = "4", _("4: doubtful")
        C5 = "5", _("5: improbable")
        C6 = "6", _("6: truth cannot be judged")

    class Consistency(models.TextChoices):  # what it shows against what its source claims
        SAME = "same", _("Shows what its source claims")
        PARTLY = "partly", _("Partly differs from what its source claims")
        DIFFERS = "differs", _("Differs from what its source claims")

    class Geolocation(models.TextChoices):
        EXACT = "exact", _("Exact (±10 m)")
        VICINITY = "vicinity", _("Vicinity (±100 m)")
        LOCALITY = "locality", _("Locality (±1 km)")
        UNKNOWN = "unknown", _("Unknown")

    case = models.ForeignKey("casefiles.Case", models.PROTECT, related_name="assessments")
    item = item_field("assessments")
    testimony = testimony_field("assessments")
    assessor = models.ForeignKey(settings.AUTH_USER_MODEL, models.PROTECT, related_name="+")
    at = models.DateTimeField(auto_now_add=True)
    reliability = models.CharField(
        _("source reliability"), max_length=1, choices=Reliability.choices
    )
    credibility = models.CharField(
        _("information credibility"), max_length=1, choices=Credibility.choices
    )
    consistency = models.CharField(
        _("against its source's claim"), max_length=8, choices=Consistency.choices
    )
    geolocation = models.CharField(
        _("geolocation precision"), max_length=8, choices=Geolocation.choices
    )
    authenticity = models.TextField(_("authenticity notes"), blank=True)
    rationale = models.TextField(_("rationale"))

    objects = CaseOwnedQuerySet.as_manager()

    class Meta:
        ordering = ["at", "pk"]
        constraints = [one_record("assessment_of_item_or_testimony")]
        # Each assessor's latest assessment of an item (the workspace's grade filters).
        indexes = [models.Index(fields=["item", "assessor", "id"], name="assessment_latest")]

    def __str__(self) -> str:
        return f"{self.reliability}{self.credibility} by {self.assessor_id}"


class Comment(OnRecord, AppendOnlyModel):
    """A case member's comment on an item or a testimony; ``@username`` mentions a
    member of the case. Kept as written (a correction is a new comment)."""

    chain_bound = True

    case = models.ForeignKey("casefiles.Case", models.PROTECT, related_name="comments")
    item = item_field("comments")
    testimony = testimony_field("comments")
    author = models.ForeignKey(settings.AUTH_USER_MODEL, models.PROTECT, related_name="+")
    at = models.DateTimeField(auto_now_add=True)
    text = models.TextField(_("comment"))
    mentions = models.ManyToManyField(
        settings.AUTH_USER_MODEL, blank=True, related_name="mentioned_in"
    )

    objects = CaseOwnedQuerySet.as_manager()

    class Meta:
        ordering = ["at", "pk"]
        constraints = [one_record("comment_on_item_or_testimony")]

    def __str__(self) -> str:
        return f"{self.author_id} on {self.item or self.testimony}"


class ReviewAssignment(models.Model):
    """Who is to review an item now: a member of its case who may review. One row per
    item, replaced when it is assigned again; every assignment is in the audit log."""

    item = models.OneToOneField(
        "evidence.EvidenceItem", models.PROTECT, primary_key=True, related_name="assignment"
    )
    case = models.ForeignKey("casefiles.Case", models.PROTECT, related_name="+")
    reviewer = models.ForeignKey(settings.AUTH_USER_MODEL, models.PROTECT, related_name="+")
    assigned_by = models.ForeignKey(settings.AUTH_USER_MODEL, models.PROTECT, related_name="+")
    assigned_at = models.DateTimeField()

    objects = CaseScopedQuerySet.as_manager()

    class Meta:
        indexes = [models.Index(fields=["case", "reviewer"], name="assignment_case_reviewer")]

    def __str__(self) -> str:
        return f"{self.item_id} to {self.reviewer_id}"


class SavedSearch(models.Model):
    """A workspace filter kept on the server under a name: its owner's alone, or shared
    with the members of its case."""

    case = models.ForeignKey("casefiles.Case", models.PROTECT, related_name="+")
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, models.PROTECT, related_name="+")
    name = models.CharField(_("name"), max_length=100)
    query = models.CharField(max_length=2000, blank=True)  # the filter as normalised
    shared = models.BooleanField(_("shared with the case"), default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    objects = SavedSearchQuerySet.as_manager()

    class Meta:
        ordering = ["name", "pk"]
        indexes = [models.Index(fields=["case", "owner"], name="saved_search_case_owner")]

    def __str__(self) -> str:
        return f"saved search #{self.pk}"  # the name is the owner's words: not in labels


class BulkJob(models.Model):
    """One bulk action on many items: what was asked, on which items, and how far it
    went. Items change in chunks, each its own transaction and audit entry naming them
    (``legal/services/bulk.py``); ``cursor`` is the last item done, to resume from."""

    class Status(models.TextChoices):
        PENDING = "pending", _("Waiting")
        RUNNING = "running", _("Running")
        DONE = "done", _("Done")
        FAILED = "failed", _("Stopped by an error")

    case = models.ForeignKey("casefiles.Case", models.PROTECT, related_name="+")
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, models.PROTECT, related_name="+")
    action = models.CharField(max_length=16)
    params = models.JSONField(default=dict)  # the action's values (tag, reviewer id, ...)
    query = models.CharField(max_length=2000, blank=True)  # everything this filter matched,
    selection = models.JSONField(null=True, blank=True)  # or these items (primary keys)
    through = models.BigIntegerField(default=0)  # no item added after the confirmation
    total = models.IntegerField(default=0)
    done = models.IntegerField(default=0)
    changed = models.IntegerField(default=0)
    skipped = models.JSONField(default=dict)  # {reason: count}
    cursor = models.BigIntegerField(default=0)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    objects = CaseScopedQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self) -> str:
        return f"bulk job #{self.pk}"

    @property
    def progress(self) -> int:
        return min(100, round(100 * self.done / self.total)) if self.total else 100

    @property
    def skipped_total(self) -> int:
        return sum(self.skipped.values())
