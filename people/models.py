"""Witnesses, victims and sources; consent; testimony and its immutable versions.

A person is known everywhere by a pseudonymous code (``W-0017``). Their identity lives
in ``enc_*`` columns, AES-GCM ciphertexts bound to table, row and column (see
``crypto``); it is opened only by ``services.reveal_identity`` and ``rotate_keys``.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from dataclasses import dataclass, fields

from django.conf import settings
from django.db import models
from django.urls import reverse
from django.utils.translation import gettext_lazy as _

from casefiles.querysets import CaseScopedQuerySet
from casefiles.reviewing import ReviewStatus

from . import crypto
from .querysets import (
    AppendOnlyCaseQuerySet,
    PersonQuerySet,
    TestimonyVersionQuerySet,
)


@dataclass(frozen=True)
class Identity:
    """The protected identity of a person, in the clear. Never stored like this."""

    name_ar: str = ""
    name_latin: str = ""
    aliases: str = ""  # one per line
    birth_date: str = ""  # as told: 1985, 1985-03 or 1985-03-14
    phone: str = ""
    address: str = ""
    risk_notes: str = ""
    # The name in parts, in both scripts: JSON {"given_ar": ..., "given_latin": ...}
    # (``NAME_PARTS`` x ``NAME_SCRIPTS``), written by ``parts_json``.
    name_parts: str = ""

    def names(self) -> list[str]:
        return [self.name_ar, self.name_latin, *self.aliases.splitlines()]

    def parts(self) -> dict[str, str]:
        """The name's parts by field name (``part_fields``), empty ones left out."""
        stored = json.loads(self.name_parts) if self.name_parts else {}
        return {k: str(stored[k]) for k in part_fields() if stored.get(k)}

    def name_part_values(self) -> list[str]:
        return list(self.parts().values())


# A person's name in parts: given name, father's, grandfather's, family name or nisba,
# laqab (an epithet: al-Halabi, Abu Shakir's "al-Tawil"), kunya (Abu / Umm + a child).
NAME_PARTS = ("given", "father", "grandfather", "family", "laqab", "kunya")
NAME_SCRIPTS = ("ar", "latin")


def part_fields() -> list[str]:
    return [f"{part}_{script}" for part in NAME_PARTS for script in NAME_SCRIPTS]


def parts_json(values: dict[str, str]) -> str:
    """The stored form of a name's parts: the non-empty ones, keys sorted."""
    kept = {k: values[k].strip() for k in part_fields() if (values.get(k) or "").strip()}
    return json.dumps(kept, ensure_ascii=False, sort_keys=True) if kept else ""


PROTECTED_FIELDS = tuple(f.name for f in fields(Identity))
# Fields added after people were registered: a row registered before holds "" (no
# ciphertext) until its identity is sealed again (``rotate_keys``, a change of names).
LATER_FIELDS = frozenset({"name_parts"})


class RoleKind(models.TextChoices):
    WITNESS = "witness", _("Witness")
    VICTIM = "victim", _("Victim")
    SOURCE = "source", _("Source")
    FAMILY = "family", _("Family member")
    PERPETRATOR = "perpetrator", _("Suspected perpetrator")


CODE_PREFIXES: dict[str, str] = {
    RoleKind.WITNESS: "W",
    RoleKind.VICTIM: "V",
    RoleKind.SOURCE: "S",
    RoleKind.FAMILY: "F",
    RoleKind.PERPETRATOR: "P",
}


class Person(models.Model):
    # The victim's details are changed by the app (registration, a change of status) and
    # each change binds their new state into the audit chain (``casefiles.bindings``).
    chain_tracked = ("id", "victim_status", "last_seen_on", "last_seen_place")

    class Protection(models.TextChoices):
        STANDARD = "standard", _("Standard")
        HIGH = "high", _("High")
        CRITICAL = "critical", _("Critical")

    class VictimStatus(models.TextChoices):
        """A victim's one status, read and changed by the missing app too (decision
        0021); each change goes through ``services.set_victim_status_within``."""

        MISSING = "missing", _("Missing")
        DETAINED = "detained", _("Detained")
        DECEASED = "deceased", _("Deceased")
        IDENTIFIED = "identified", _("Identified")
        RELEASED = "released", _("Released")

    # A random id, known before the row is written, binds each ciphertext to its row.
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    code = models.CharField(_("code"), max_length=16, unique=True)
    case = models.ForeignKey("casefiles.Case", models.PROTECT, related_name="registered_people")
    enc_name_ar = models.TextField()
    enc_name_latin = models.TextField()
    enc_aliases = models.TextField()
    enc_birth_date = models.TextField()
    enc_phone = models.TextField()
    enc_address = models.TextField()
    enc_risk_notes = models.TextField()
    enc_name_parts = models.TextField(default="")
    protection_level = models.CharField(
        _("protection level"),
        max_length=16,
        choices=Protection.choices,
        default=Protection.STANDARD,
    )
    victim_status = models.CharField(
        _("victim status"), max_length=16, choices=VictimStatus.choices, blank=True
    )
    # A victim's details in the clear (decision 0023): what the case's incident says
    # already. What identifies them (detainee number, detention branch) is sealed in
    # their antemortem profile (missing app), never here.
    last_seen_on = models.DateField(_("last seen on"), null=True, blank=True)
    last_seen_place = models.CharField(_("last seen at"), max_length=200, blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, models.PROTECT, related_name="+")
    created_at = models.DateTimeField(_("registered at"), auto_now_add=True)

    objects = PersonQuerySet.as_manager()

    class Meta:
        ordering = ["code"]
        verbose_name = _("person")
        verbose_name_plural = _("people")

    def __str__(self) -> str:
        return self.code

    def get_absolute_url(self) -> str:
        return reverse("people:person_detail", args=[self.case.reference, self.code])

    def _aad(self, name: str) -> bytes:
        return crypto.associated_data(self._meta.db_table, self.pk, f"enc_{name}")

    def seal_identity(self, identity: Identity) -> None:
        """Encrypt every protected field under the current key."""
        for name in PROTECTED_FIELDS:
            setattr(self, f"enc_{name}", crypto.encrypt(getattr(identity, name), self._aad(name)))

    def _open(self, name: str) -> str:
        stored = getattr(self, f"enc_{name}")
        if not stored and name in LATER_FIELDS:
            return ""
        try:
            return crypto.decrypt(stored, self._aad(name))
        except crypto.DecryptionError as exc:
            raise crypto.SealBroken(self._meta.db_table, self.pk, f"enc_{name}", str(exc)) from exc

    def open_identity(self) -> Identity:
        """Decrypt the identity. Callers audit why (``services.reveal_identity``)."""
        return Identity(**{n: self._open(n) for n in PROTECTED_FIELDS})


class NameDigest(models.Model):
    """One keyed digest of a normalised name or alias: the blind index."""

    person = models.ForeignKey(Person, models.CASCADE, related_name="name_digests")
    digest = models.CharField(max_length=64, db_index=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["person", "digest"], name="one_digest_per_name")
        ]

    def __str__(self) -> str:
        return f"{self.person} · {self.digest[:8]}"


class CaseRole(models.Model):
    person = models.ForeignKey(Person, models.PROTECT, related_name="case_roles")
    case = models.ForeignKey("casefiles.Case", models.PROTECT, related_name="person_roles")
    role = models.CharField(_("role"), max_length=16, choices=RoleKind.choices)
    recorded_by = models.ForeignKey(settings.AUTH_USER_MODEL, models.PROTECT, related_name="+")
    recorded_at = models.DateTimeField(auto_now_add=True)

    objects = CaseScopedQuerySet.as_manager()

    class Meta:
        ordering = ["case", "person__code", "role"]
        verbose_name = _("case role")
        verbose_name_plural = _("case roles")
        constraints = [
            models.UniqueConstraint(
                fields=["person", "case", "role"], name="one_role_of_a_kind_per_case"
            )
        ]

    def __str__(self) -> str:
        return f"{self.person} · {self.case} · {self.get_role_display()}"


class Relation(models.Model):
    """``person`` is ``kind`` of ``other`` (e.g. V-0042 is the son of W-0017)."""

    class Kind(models.TextChoices):
        MOTHER = "mother", _("mother of")
        FATHER = "father", _("father of")
        CHILD = "child", _("child of")
        SIBLING = "sibling", _("sibling of")
        SPOUSE = "spouse", _("spouse of")
        RELATIVE = "relative", _("relative of")
        ASSOCIATE = "associate", _("associate of")

    case = models.ForeignKey("casefiles.Case", models.PROTECT, related_name="+")
    person = models.ForeignKey(Person, models.PROTECT, related_name="relations")
    kind = models.CharField(_("relation"), max_length=16, choices=Kind.choices)
    other = models.ForeignKey(Person, models.PROTECT, related_name="relations_to")
    recorded_by = models.ForeignKey(settings.AUTH_USER_MODEL, models.PROTECT, related_name="+")
    recorded_at = models.DateTimeField(auto_now_add=True)

    objects = CaseScopedQuerySet.as_manager()

    class Meta:
        ordering = ["person__code", "kind", "other__code"]
        constraints = [
            models.UniqueConstraint(fields=["person", "kind", "other"], name="one_relation"),
            models.CheckConstraint(
                condition=~models.Q(person=models.F("other")), name="no_self_relation"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.person} {self.get_kind_display()} {self.other}"


class ConsentScope(models.TextChoices):
    INVESTIGATION = "investigation", _("Investigation")
    PROSECUTION = "prosecution", _("Prosecution")
    SHARING = "sharing", _("Sharing with named bodies")
    PUBLICATION = "publication", _("Publication")
    RECONTACT = "recontact", _("Recontact")


class Consent(models.Model):
    """A consent given, or the withdrawal of one: rows are never changed (triggers)."""

    chain_bound = True  # each row's content hash is in its audit entry

    class Kind(models.TextChoices):
        GRANT = "grant", _("Given")
        WITHDRAWAL = "withdrawal", _("Withdrawn")

    class How(models.TextChoices):
        WRITTEN = "written", _("Written, signed")
        ORAL_RECORDED = "oral_recorded", _("Oral, recorded")
        ORAL_WITNESSED = "oral_witnessed", _("Oral, before a witness")

    person = models.ForeignKey(Person, models.PROTECT, related_name="consents")
    case = models.ForeignKey("casefiles.Case", models.PROTECT, related_name="+")
    kind = models.CharField(max_length=16, choices=Kind.choices, default=Kind.GRANT)
    scopes = models.JSONField(_("scopes"), default=list)
    bodies = models.TextField(_("named bodies"), blank=True)  # one per line
    how = models.CharField(_("how given"), max_length=16, choices=How.choices)
    given_on = models.DateField(_("date"))
    withdraws = models.ForeignKey(
        "self", models.PROTECT, null=True, blank=True, related_name="withdrawals"
    )
    notes = models.TextField(_("notes"), blank=True)
    recorded_by = models.ForeignKey(settings.AUTH_USER_MODEL, models.PROTECT, related_name="+")
    recorded_at = models.DateTimeField(auto_now_add=True)

    objects = AppendOnlyCaseQuerySet.as_manager()

    class Meta:
        ordering = ["recorded_at", "pk"]
        verbose_name = _("consent")
        verbose_name_plural = _("consents")

    def __str__(self) -> str:
        return f"{self.person} · {self.get_kind_display()} {self.given_on}"

    def save(self, *args, **kwargs) -> None:
        if not self._state.adding:
            raise TypeError("Consent records are never changed: record a withdrawal.")
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        raise TypeError("Consent records are never deleted: record a withdrawal.")

    def body_list(self) -> list[str]:
        return [b.strip() for b in self.bodies.splitlines() if b.strip()]

    def scope_labels(self) -> list[str]:
        return [str(ConsentScope(s).label) for s in self.scopes]


class Testimony(models.Model):
    Status = ReviewStatus  # moved only by legal's review services

    class Mode(models.TextChoices):
        IN_PERSON = "in_person", _("In person")
        VIDEO = "video", _("Video call")
        PHONE = "phone", _("Telephone")
        WRITTEN = "written", _("Written statement")

    class Language(models.TextChoices):
        ARABIC = "ar", _("Arabic")
        KURDISH = "ku", _("Kurdish")
        ENGLISH = "en", _("English")
        FRENCH = "fr", _("French")
        TURKISH = "tr", _("Turkish")
        OTHER = "other", _("Other")

    case = models.ForeignKey("casefiles.Case", models.PROTECT, related_name="testimonies")
    witness = models.ForeignKey(Person, models.PROTECT, related_name="testimonies")
    interviewers = models.ManyToManyField(
        settings.AUTH_USER_MODEL, related_name="+", verbose_name=_("interviewers")
    )
    interpreter = models.CharField(_("interpreter"), max_length=200, blank=True)
    taken_at = models.DateTimeField(_("when"))
    place = models.CharField(_("where"), max_length=200, blank=True)
    remote = models.BooleanField(_("remote"), default=False)
    language = models.CharField(_("language"), max_length=8, choices=Language.choices)
    mode = models.CharField(_("mode"), max_length=16, choices=Mode.choices)
    status = models.CharField(
        _("status"), max_length=16, choices=Status.choices, default=Status.NEW
    )
    submitted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, models.PROTECT, null=True, blank=True, related_name="+"
    )
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, models.PROTECT, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    objects = CaseScopedQuerySet.as_manager()

    class Meta:
        ordering = ["-taken_at", "pk"]
        # The testimony list's order (keyset pages, newest first).
        indexes = [models.Index(fields=["case", "-taken_at", "id"], name="testimony_case_taken")]
        verbose_name = _("testimony")
        verbose_name_plural = _("testimonies")

    def __str__(self) -> str:
        return f"T-{self.pk:04d} · {self.witness}" if self.pk else "T-new"

    def get_absolute_url(self) -> str:
        return reverse("people:testimony_detail", args=[self.case.reference, self.pk])

    @property
    def editable(self) -> bool:
        """A new or returned statement takes new versions; so does an approved one, which
        then goes back for review. One under review or rejected does not."""
        return self.status in {self.Status.NEW, self.Status.RETURNED, self.Status.APPROVED}


def text_sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class TestimonyVersion(models.Model):
    """One state of a statement. Never changed or deleted (model and database refuse)."""

    chain_bound = True  # each row's content hash is in its audit entry

    testimony = models.ForeignKey(Testimony, models.PROTECT, related_name="versions")
    number = models.PositiveIntegerField()
    text = models.TextField(_("statement"))
    reason = models.CharField(_("reason for the change"), max_length=300)
    sha256 = models.CharField(max_length=64)
    author = models.ForeignKey(settings.AUTH_USER_MODEL, models.PROTECT, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    objects = TestimonyVersionQuerySet.as_manager()

    class Meta:
        ordering = ["testimony", "number"]
        constraints = [
            models.UniqueConstraint(fields=["testimony", "number"], name="one_version_number")
        ]

    def __str__(self) -> str:
        return f"{self.testimony} v{self.number}"

    def save(self, *args, **kwargs) -> None:
        if not self._state.adding:
            raise TypeError("Testimony versions are append-only: they cannot be changed.")
        kwargs["force_insert"] = True
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        raise TypeError("Testimony versions are append-only: they cannot be deleted.")


class ProtectionChange(models.Model):
    """A person's protection level raised or lowered: who, when, why. Append-only, bound
    into the audit chain. The database lets ``Person.protection_level`` change only to
    what the person's latest such row records (``casefiles.db.ChangesWithRecord``)."""

    chain_bound = True  # each row's content hash is in its audit entry

    person = models.ForeignKey(Person, models.PROTECT, related_name="protection_changes")
    from_level = models.CharField(max_length=16, choices=Person.Protection.choices)
    to_level = models.CharField(max_length=16, choices=Person.Protection.choices)
    reason = models.TextField(_("reason"))
    changed_by = models.ForeignKey(settings.AUTH_USER_MODEL, models.PROTECT, related_name="+")
    changed_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["changed_at", "pk"]

    def __str__(self) -> str:
        return f"{self.person}: {self.from_level} → {self.to_level}"

    def save(self, *args, **kwargs) -> None:
        if not self._state.adding:
            raise TypeError("Protection changes are append-only.")
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        raise TypeError("Protection changes are append-only.")
