"""Places: a gazetteer shared by every case (decision 0017). A hierarchy, country →
governorate → district → town → facility (a prison, a military hospital, an intelligence
branch), each with its names in English and Arabic, other spellings and, where known,
coordinates. It is reference data, not case content: any signed-in user may search it.

``search_text`` holds every name of a place in the searchable form of
``search.normalise`` (written on save), so a search in either script, with or without
hamza, taa marbuta or Latin accents, finds the place.

A photo is placed (``ItemLocation``) by what its GPS position gives: the nearest
GeoNames town (by its key), that town's first-order division (a governorate) and a
seeded facility close by. GeoNames knows no districts, so a photo is in a district
when its nearest town is one of the district's towns: each town of the gazetteer keeps
the keys of all its names (``PlaceKey``, written on save), and the photos within a
place are one query whatever its kind (``ItemLocationQuerySet.within``).
"""

from __future__ import annotations

import re

from django.core.exceptions import ValidationError
from django.db import models, transaction
from django.db.models import Exists, Q
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


_NOT_A_LETTER = re.compile(r"[^\w ]+")


def town_key(name: str) -> str:
    """A town's name as it is searched: normalised, without its apostrophes and the
    ʿayn and hamza signs of transliteration (GeoNames writes Irbin with a left quote before it)."""
    return " ".join(_NOT_A_LETTER.sub("", normalise(name)).split())


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
        with transaction.atomic():
            super().save(*args, **kwargs)
            PlaceKey.objects.filter(place=self).delete()
            PlaceKey.objects.bulk_create(
                PlaceKey(place=self, key=key) for key in sorted(self.town_keys())
            )

    def town_keys(self) -> set[str]:
        """For a town, the keys of all its names (as ``ItemLocation.town_key`` holds the
        nearest GeoNames town's): list GeoNames' spelling among the other spellings
        ("Dūmā" for Douma) and the town's photos are found in it."""
        if self.kind != Kind.TOWN:
            return set()
        names = [self.name_en, self.name_ar, *self.alt_names]
        return {key[:200] for key in map(town_key, names) if key}

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


class PlaceKey(models.Model):
    """One key (``town_key``) of one of a town's names: how a photo's nearest GeoNames
    town is matched to the towns of the gazetteer, and so to their districts."""

    place = models.ForeignKey(Place, models.CASCADE, related_name="+")
    key = models.CharField(max_length=200)

    class Meta:
        constraints = [
            # Key first: a place's keys are read by place (the foreign key's index), a
            # photo's town is matched by key.
            models.UniqueConstraint(fields=["key", "place"], name="place_key_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.place_id}: {self.key}"


class ItemLocationQuerySet(models.QuerySet["ItemLocation"]):
    def within(self, place: Place) -> ItemLocationQuerySet:
        """The locations in ``place`` or anywhere within it, one query whatever its kind,
        each level by an index that starts with the case: a country by its governorates,
        a governorate or a facility as the location names it, a town by the keys of its
        names and a district by those of its towns (GeoNames knows no districts), in the
        governorate above them (two towns of one name may lie in two governorates)."""
        if place.kind == Kind.FACILITY:
            return self.filter(facility=place)
        if place.kind == Kind.GOVERNORATE:
            return self.filter(governorate=place)
        if place.kind == Kind.COUNTRY:
            return self.filter(
                governorate__in=Place.objects.filter(kind=Kind.GOVERNORATE, parent=place)
            )
        towns = Place.objects.filter(Q(pk=place.pk) | Q(parent=place.pk), kind=Kind.TOWN)
        found = self.filter(town_key__in=PlaceKey.objects.filter(place__in=towns).values("key"))
        if place.parent_id is None:
            return found
        # The governorate above: the parent (a town or district within a governorate) or
        # the parent's (a town within a district). None above (a place within a country
        # only): the keys alone.
        above = Place.objects.filter(
            Q(pk=place.parent_id) | Q(children=place.parent_id), kind=Kind.GOVERNORATE
        )
        return found.filter(Q(governorate__in=above.values("pk")) | ~Exists(above))


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

    objects = ItemLocationQuerySet.as_manager()

    class Meta:
        indexes = [
            # The gallery's filters, within a case.
            models.Index(fields=["case", "town_key", "item"], name="location_case_town"),
            models.Index(fields=["case", "governorate", "item"], name="location_case_gov"),
            models.Index(fields=["case", "facility", "item"], name="location_case_facility"),
        ]

    def __str__(self) -> str:
        return f"{self.item_id}: {self.town}"
