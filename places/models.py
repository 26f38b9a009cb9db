"""Places: a gazetteer shared by every case (decision 0017). A hierarchy, country →
governorate → district → town → facility (a prison, a military hospital, an intelligence
branch), each with its names in English and Arabic, other spellings and, where known,
coordinates. It is reference data, not case content: any signed-in user may search it.

``search_text`` holds every name of a place in the searchable form of
``search.normalise`` (written on save), so a search in either script, with or without
hamza, taa marbuta or Latin accents, finds the place.
"""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import models
from django.utils.translation import get_language
from django.utils.translation import gettext_lazy as _

from search.normalise import normalise


class Kind(models.TextChoices):
    COUNTRY = "country", _("Country")
    GOVERNORATE = "governorate", _("Governorate")
    DISTRICT = "district", _("District")
    TOWN = "town", _("Town")
    FACILITY = "facility", _("Facility")


# Each kind sits under a kind of lower rank (a facility may be placed in a governorate
# when its town is not recorded).
RANK = {kind: n for n, kind in enumerate(Kind.values)}


class FacilityType(models.TextChoices):
    PRISON = "prison", _("Prison")
    MILITARY_HOSPITAL = "military_hospital", _("Military hospital")
    INTELLIGENCE_BRANCH = "intelligence_branch", _("Intelligence branch")
    MILITARY_POLICE = "military_police", _("Military police")
    CHECKPOINT = "checkpoint", _("Checkpoint")
    OTHER = "other", _("Other facility")


def searchable(*names: str) -> str:
    """One string holding every name in its searchable form, each between bars, so that
    a query never matches across two names."""
    return "|" + "|".join(normalise(n) for n in names if n.strip()) + "|"


class Place(models.Model):
    code = models.CharField(_("code"), max_length=40, unique=True)
    kind = models.CharField(_("kind"), max_length=16, choices=Kind.choices)
    facility_type = models.CharField(
        _("facility type"), max_length=24, choices=FacilityType.choices, blank=True
    )
    parent = models.ForeignKey(
        "self",
        models.PROTECT,
        null=True,
        blank=True,
        related_name="children",
        verbose_name=_("within"),
    )
    name_en = models.CharField(_("name in English"), max_length=200)
    name_ar = models.CharField(_("name in Arabic"), max_length=200)
    alt_names = models.JSONField(_("other spellings"), default=list, blank=True)
    latitude = models.DecimalField(max_digits=9, decimal_places=6, null=True, blank=True)
    longitude = models.DecimalField(max_digits=9, decimal_places=6, null=True, blank=True)
    # A governorate's first-order division name in GeoNames: the nearest town of a photo's
    # position names it, and so finds the governorate here.
    geonames_admin1 = models.CharField(max_length=100, blank=True, db_index=True)
    search_text = models.TextField(editable=False, default="")
    since = models.CharField(_("gazetteer version"), max_length=16, default="local")

    class Meta:
        ordering = ["code"]
        verbose_name = _("place")
        verbose_name_plural = _("places")
        indexes = [models.Index(fields=["kind", "code"], name="place_kind_code")]

    def __str__(self) -> str:
        return self.name(get_language())

    def save(self, *args, **kwargs) -> None:
        self.search_text = searchable(self.name_en, self.name_ar, *self.alt_names)
        super().save(*args, **kwargs)

    def name(self, language: str | None) -> str:
        return self.name_ar if (language or "").startswith("ar") else self.name_en

    def clean(self) -> None:
        if self.parent is not None and RANK[self.parent.kind] >= RANK[self.kind]:
            raise ValidationError({"parent": _("A place sits within a place of a larger kind.")})
        if not isinstance(self.alt_names, list) or not all(
            isinstance(n, str) for n in self.alt_names
        ):
            raise ValidationError({"alt_names": _("Other spellings are a list of names.")})

    def lineage(self) -> list[Place]:
        """The places this one sits within, the largest first."""
        above, found = self.parent, []
        while above is not None:
            found.append(above)
            above = above.parent
        return found[::-1]

    @property
    def has_position(self) -> bool:
        return self.latitude is not None and self.longitude is not None


class ItemLocation(models.Model):
    """Where a photo was taken, as its GPS position says: the nearest town (GeoNames, by
    name and in searchable form), the governorate that names, and the seeded facility
    nearest it if one is close. Derived at intake (``places.locating``), like a
    thumbnail: not evidence, and remade from the position whenever asked."""

    item = models.OneToOneField(
        "evidence.EvidenceItem", models.CASCADE, related_name="location", primary_key=True
    )
    case = models.ForeignKey("casefiles.Case", models.CASCADE, related_name="+")
    town = models.CharField(max_length=200)
    town_key = models.CharField(max_length=200)
    town_km = models.DecimalField(max_digits=8, decimal_places=2)
    governorate = models.ForeignKey(Place, models.PROTECT, null=True, blank=True, related_name="+")
    facility = models.ForeignKey(Place, models.PROTECT, null=True, blank=True, related_name="+")

    class Meta:
        indexes = [
            # The gallery's filters, within a case.
            models.Index(fields=["case", "town_key", "item"], name="location_case_town"),
            models.Index(fields=["case", "governorate", "item"], name="location_case_gov"),
            models.Index(fields=["case", "facility", "item"], name="location_case_facility"),
        ]

    def __str__(self) -> str:
        return f"{self.item_id}: {self.town}"
