"""Incidents: what happened, when, where, to whom and by whom (decision 0017).

An incident belongs to one case. Its *current state* is these rows: the incident (title
and description in Arabic and/or English, when with its precision, where), its acts
(a victim of the case by pseudonym, an act type and a method from the vocabularies, the
perpetrators, each a unit from the vocabulary or a person of the case, with a degree of
involvement) and its links to evidence items, testimonies and legal elements. Every
change, made only by ``incidents.services``, also appends an ``IncidentVersion``: the
whole incident as it then stood, as JSON, never changed or deleted (model, queryset and
database triggers refuse) and bound into the audit chain.
"""

from __future__ import annotations

import calendar
from datetime import date

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.urls import reverse
from django.utils.translation import gettext_lazy as _

from .querysets import IncidentPartQuerySet, IncidentQuerySet, PerpetratorQuerySet, VersionQuerySet


class Precision(models.TextChoices):
    DAY = "day", _("On the day")
    MONTH = "month", _("In the month")
    YEAR = "year", _("In the year")
    RANGE = "range", _("Between two dates")
    APPROXIMATE = "approximate", _("About")


def span(precision: str, start: date, end: date | None = None) -> tuple[date, date]:
    """The first and last day an incident's date may be: a month or a year is all of it,
    a range is as given, a day and an approximate date are that one day."""
    if precision == Precision.MONTH:
        last = calendar.monthrange(start.year, start.month)[1]
        return start.replace(day=1), start.replace(day=last)
    if precision == Precision.YEAR:
        return date(start.year, 1, 1), date(start.year, 12, 31)
    if precision == Precision.RANGE and end is not None:
        return start, end
    return start, start


class Incident(models.Model):
    case = models.ForeignKey("casefiles.Case", models.PROTECT, related_name="incidents")
    reference = models.CharField(_("reference"), max_length=16)  # "IN-0001"
    title_en = models.CharField(_("title in English"), max_length=300, blank=True)
    title_ar = models.CharField(_("title in Arabic"), max_length=300, blank=True)
    description_en = models.TextField(_("description in English"), blank=True)
    description_ar = models.TextField(_("description in Arabic"), blank=True)
    precision = models.CharField(
        _("date precision"), max_length=16, choices=Precision.choices, blank=True
    )
    starts_on = models.DateField(_("from"), null=True, blank=True)
    ends_on = models.DateField(_("until"), null=True, blank=True)
    place = models.ForeignKey(
        "places.Place", models.PROTECT, null=True, blank=True, related_name="incidents"
    )
    version = models.PositiveIntegerField(default=0)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, models.PROTECT, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = IncidentQuerySet.as_manager()

    class Meta:
        ordering = ["case", "reference"]
        constraints = [
            models.UniqueConstraint(fields=["case", "reference"], name="incident_reference"),
            models.CheckConstraint(
                condition=~Q(title_en="") | ~Q(title_ar=""), name="incident_has_a_title"
            ),
            models.CheckConstraint(
                condition=Q(starts_on__isnull=True)
                | Q(ends_on__isnull=True)
                | Q(ends_on__gte=models.F("starts_on")),
                name="incident_ends_after_it_starts",
            ),
        ]
        indexes = [
            # The list's filters by date and place, within a case.
            models.Index(fields=["case", "starts_on", "ends_on"], name="incident_case_when"),
            models.Index(fields=["case", "place"], name="incident_case_place"),
        ]

    def __str__(self) -> str:
        # The reference alone: audit entries label their targets by it, and a system
        # admin reads those labels without reading the case (its titles are content).
        return self.reference

    def get_absolute_url(self) -> str:
        return reverse("incidents:incident_detail", args=[self.case.reference, self.reference])

    @property
    def when(self) -> str:
        """The date as precise as it is known: "2012-12-03", "2012-12", "2012",
        "2012-11-01 / 2013-02-28" (ISO 8601's interval), "~2012-12-03"."""
        if self.starts_on is None:
            return ""
        start = self.starts_on
        if self.precision == Precision.MONTH:
            return f"{start:%Y-%m}"
        if self.precision == Precision.YEAR:
            return f"{start:%Y}"
        if self.precision == Precision.RANGE and self.ends_on and self.ends_on != start:
            return f"{start:%Y-%m-%d} / {self.ends_on:%Y-%m-%d}"
        if self.precision == Precision.APPROXIMATE:
            return f"~{start:%Y-%m-%d}"
        return f"{start:%Y-%m-%d}"


class Act(models.Model):
    """One act of an incident: what was done to one victim, and how."""

    incident = models.ForeignKey(Incident, models.CASCADE, related_name="acts")
    victim = models.ForeignKey("people.Person", models.PROTECT, related_name="+")
    act_type = models.ForeignKey(
        "vocabularies.Term",
        models.PROTECT,
        related_name="+",
        limit_choices_to={"scheme": "act_type"},
    )
    method = models.ForeignKey(
        "vocabularies.Term",
        models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        limit_choices_to={"scheme": "method"},
    )

    objects = IncidentPartQuerySet.as_manager()

    class Meta:
        ordering = ["incident", "pk"]
        indexes = [
            models.Index(fields=["act_type", "incident"], name="act_type_incident"),
            models.Index(fields=["victim", "incident"], name="act_victim_incident"),
        ]

    def __str__(self) -> str:
        return f"{self.incident.reference}: {self.act_type} ({self.victim})"


class Perpetrator(models.Model):
    """Who took part in an act: a unit (a term of the perpetrator types) or a person of
    the case, and how (a degree of involvement)."""

    act = models.ForeignKey(Act, models.CASCADE, related_name="perpetrators")
    unit = models.ForeignKey(
        "vocabularies.Term",
        models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        limit_choices_to={"scheme": "perpetrator_type"},
    )
    person = models.ForeignKey(
        "people.Person", models.PROTECT, null=True, blank=True, related_name="+"
    )
    involvement = models.ForeignKey(
        "vocabularies.Term",
        models.PROTECT,
        related_name="+",
        limit_choices_to={"scheme": "involvement"},
    )

    objects = PerpetratorQuerySet.as_manager()

    class Meta:
        ordering = ["act", "pk"]
        constraints = [
            models.CheckConstraint(
                condition=Q(unit__isnull=True) ^ Q(person__isnull=True),
                name="perpetrator_unit_or_person",
            )
        ]

    def __str__(self) -> str:
        return str(self.unit or self.person)


class Link(models.Model):
    """An incident's tie to an evidence item, a testimony or a legal element."""

    incident = models.ForeignKey(Incident, models.CASCADE, related_name="links")
    item = models.ForeignKey(
        "evidence.EvidenceItem", models.PROTECT, null=True, blank=True, related_name="+"
    )
    testimony = models.ForeignKey(
        "people.Testimony", models.PROTECT, null=True, blank=True, related_name="+"
    )
    element = models.ForeignKey(
        "legal.LegalElement", models.PROTECT, null=True, blank=True, related_name="+"
    )

    objects = IncidentPartQuerySet.as_manager()

    class Meta:
        ordering = ["incident", "pk"]
        constraints = [
            models.CheckConstraint(
                condition=(
                    Q(item__isnull=False, testimony__isnull=True, element__isnull=True)
                    | Q(item__isnull=True, testimony__isnull=False, element__isnull=True)
                    | Q(item__isnull=True, testimony__isnull=True, element__isnull=False)
                ),
                name="incident_link_to_one_record",
            ),
            models.UniqueConstraint(fields=["incident", "item"], name="incident_link_item"),
            models.UniqueConstraint(
                fields=["incident", "testimony"], name="incident_link_testimony"
            ),
            models.UniqueConstraint(fields=["incident", "element"], name="incident_link_element"),
        ]

    def __str__(self) -> str:
        return self.label

    @property
    def label(self) -> str:
        """The record by its reference: EV-000123, T-0001, RS-7-1-f.1."""
        if self.item_id is not None:
            return self.item.reference if self.item else ""
        if self.testimony_id is not None:
            return f"T-{self.testimony_id:04d}"
        return self.element.code if self.element else ""


class IncidentVersion(models.Model):
    """The whole incident as one change left it. Never changed or deleted."""

    chain_bound = True  # each row's content hash is in its audit entry

    incident = models.ForeignKey(Incident, models.PROTECT, related_name="versions")
    number = models.PositiveIntegerField()
    change = models.CharField(max_length=40)  # the audit action that made it
    state = models.JSONField()
    sha256 = models.CharField(max_length=64)
    author = models.ForeignKey(settings.AUTH_USER_MODEL, models.PROTECT, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    objects = VersionQuerySet.as_manager()

    class Meta:
        ordering = ["incident", "number"]
        constraints = [
            models.UniqueConstraint(fields=["incident", "number"], name="incident_version_number")
        ]

    def __str__(self) -> str:
        return f"{self.incident.reference} v{self.number}"

    def save(self, *args, **kwargs) -> None:
        if not self._state.adding:
            raise TypeError("Incident versions are append-only: they cannot be changed.")
        kwargs["force_insert"] = True
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        raise TypeError("Incident versions are append-only: they cannot be deleted.")
