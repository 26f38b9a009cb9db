"""The missing (decision 0018): a victim's antemortem profile, its status history, and
family identification sessions.

The profile's descriptive fields and the family contact are protected like identity:
encrypted at rest with ``people.crypto`` (each ciphertext bound to its row and column)
and opened only by ``services.reveal_profile``, for those who may reveal the person. Who
was present at an identification is sealed the same way, and shown only to the lead, on
the session page. The app registers these sealed columns (``people.sealed``, from
``apps.MissingConfig.ready``), so ``rotate_keys`` re-encrypts them.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, fields

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from people import crypto
from people.models import Person

from .querysets import CandidateQuerySet, ProfileQuerySet, SessionQuerySet, StatusQuerySet


@dataclass
class Antemortem:
    physical: str = ""
    clothing: str = ""
    marks: str = ""
    dental: str = ""
    last_seen_text: str = ""
    detainee_number: str = ""
    detention_branch: str = ""
    family_contact: str = ""


PROTECTED_FIELDS = [f.name for f in fields(Antemortem)]


# A victim has one status, the person's (decision 0021): read and changed through people
# (``people.services.set_victim_status_within``); each change of a person with a profile
# is kept here as a ``StatusChange`` (``services.keep_status_change``, a people hook).
Status = Person.VictimStatus


class Profile(models.Model):
    """A victim's antemortem profile: one per person. Its status is the person's
    (``person.victim_status``); its history is ``history``. Each save (and each
    re-encryption) binds the whole row's new state into the audit chain, so a sealed
    value changed behind the app's back is named by ``verify_audit``."""

    chain_tracked = "__all__"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    case = models.ForeignKey("casefiles.Case", models.PROTECT, related_name="+")
    person = models.OneToOneField(
        "people.Person", models.PROTECT, related_name="antemortem_profile"
    )
    last_seen_on = models.DateField(_("last seen on"), null=True, blank=True)
    last_seen_place = models.ForeignKey(
        "places.Place", models.PROTECT, null=True, blank=True, related_name="+"
    )
    facility = models.ForeignKey(
        "places.Place", models.PROTECT, null=True, blank=True, related_name="+"
    )
    enc_physical = models.TextField()
    enc_clothing = models.TextField()
    enc_marks = models.TextField()
    enc_dental = models.TextField()
    enc_last_seen_text = models.TextField()
    enc_detainee_number = models.TextField()
    enc_detention_branch = models.TextField()
    enc_family_contact = models.TextField()
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, models.PROTECT, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    objects = ProfileQuerySet.as_manager()

    class Meta:
        verbose_name = _("antemortem profile")

    def __str__(self) -> str:
        return f"profile of {self.person_id}"

    def _aad(self, name: str) -> bytes:
        return crypto.associated_data(self._meta.db_table, self.pk, f"enc_{name}")

    def seal(self, values: Antemortem) -> None:
        for name in PROTECTED_FIELDS:
            setattr(self, f"enc_{name}", crypto.encrypt(getattr(values, name), self._aad(name)))

    def open(self) -> Antemortem:
        """Decrypt the profile. Callers audit why (``services.reveal_profile``)."""
        table = self._meta.db_table
        return Antemortem(
            **{
                n: crypto.open_sealed(getattr(self, f"enc_{n}"), table, self.pk, f"enc_{n}")
                for n in PROTECTED_FIELDS
            }
        )


class StatusChange(models.Model):
    """One change of the status of a person with a profile, wherever it was made:
    append-only (model, queryset and triggers), each row bound into the audit chain by
    the entry of the change (``people.victim_status``, or ``missing.profile_save`` for
    the status a new profile opens with)."""

    chain_bound = True  # each row's content hash is in its audit entry

    profile = models.ForeignKey(Profile, models.PROTECT, related_name="history")
    old = models.CharField(max_length=16, choices=Status.choices, blank=True)
    new = models.CharField(max_length=16, choices=Status.choices)
    reason = models.CharField(max_length=500, blank=True)
    changed_by = models.ForeignKey(settings.AUTH_USER_MODEL, models.PROTECT, related_name="+")
    changed_at = models.DateTimeField(auto_now_add=True)

    objects = StatusQuerySet.as_manager()

    class Meta:
        ordering = ["changed_at", "pk"]

    def __str__(self) -> str:
        return f"{self.old} → {self.new}"

    def save(self, *args, **kwargs) -> None:
        if self.pk is not None:
            raise ValueError("A status change is never changed.")
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        raise ValueError("A status change is never deleted.")


class Session(models.Model):
    """A family identification session: the candidate photos a lead prepared for a
    victim, shown to a family member, blurred until they choose to look."""

    case = models.ForeignKey("casefiles.Case", models.PROTECT, related_name="+")
    profile = models.ForeignKey(Profile, models.PROTECT, related_name="sessions")
    family_member = models.ForeignKey("people.Person", models.PROTECT, related_name="+")
    facility = models.ForeignKey(
        "places.Place", models.PROTECT, null=True, blank=True, related_name="+"
    )
    number_from = models.PositiveIntegerField(null=True, blank=True)
    number_to = models.PositiveIntegerField(null=True, blank=True)
    taken_from = models.DateField(null=True, blank=True)
    taken_to = models.DateField(null=True, blank=True)
    # How many photos of the case the filters matched (the candidates) and left out, when
    # it was prepared; None for a session prepared before they were kept (then at most 60
    # candidates were kept, and no count of the rest).
    matched = models.PositiveIntegerField(null=True, blank=True)
    left_out = models.PositiveIntegerField(null=True, blank=True)
    prepared_by = models.ForeignKey(settings.AUTH_USER_MODEL, models.PROTECT, related_name="+")
    prepared_at = models.DateTimeField(auto_now_add=True)

    objects = SessionQuerySet.as_manager()

    class Meta:
        ordering = ["-prepared_at", "-pk"]

    def __str__(self) -> str:
        return f"session {self.pk}"


class Candidate(models.Model):
    """A photo prepared for a session; ``shown_at`` is set when the family chose to look."""

    session = models.ForeignKey(Session, models.CASCADE, related_name="candidates")
    item = models.ForeignKey("evidence.EvidenceItem", models.PROTECT, related_name="+")
    order = models.PositiveIntegerField()
    shown_at = models.DateTimeField(null=True, blank=True)
    identification = models.ForeignKey(
        "evidence.Identification", models.PROTECT, null=True, blank=True, related_name="+"
    )
    consent = models.BooleanField(default=False)  # the family member's consent to record it
    # Who was present at the identification, by role: sealed ("" until it is recorded).
    enc_present = models.TextField(default="", blank=True)

    objects = CandidateQuerySet.as_manager()

    class Meta:
        ordering = ["order"]
        constraints = [
            models.UniqueConstraint(fields=["session", "item"], name="candidate_once"),
        ]

    def __str__(self) -> str:
        return f"{self.session_id}/{self.order}"

    def _aad(self) -> bytes:
        return crypto.associated_data(self._meta.db_table, self.pk, "enc_present")

    def seal_present(self, present: str) -> None:
        self.enc_present = crypto.encrypt(present, self._aad())

    def open_present(self) -> str:
        """Who was present, in the clear (for the lead's session page)."""
        return crypto.decrypt(self.enc_present, self._aad()) if self.enc_present else ""
