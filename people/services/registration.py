"""Registering people in a case: their code, roles, relations and the victim's details;
the name index that finds them again without their names in the clear."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.core.exceptions import PermissionDenied, ValidationError
from django.db import IntegrityError, transaction
from django.utils.translation import gettext as _

from casefiles import audit
from casefiles.access import Action
from casefiles.models import Case

from .. import crypto
from ..models import (
    CODE_PREFIXES,
    CaseRole,
    Identity,
    NameDigest,
    Person,
    Relation,
)
from ..protection import (
    reveal_refusal,
)
from .common import _require

if TYPE_CHECKING:
    from django.contrib.auth.models import User as Account

# What identifies a victim (detainee number, detention branch) is not among them: it is
# sealed in their antemortem profile (missing app; decision 0023).
VICTIM_FIELDS = ("victim_status", "last_seen_on", "last_seen_place")


def _next_code(role: str) -> str:
    prefix = CODE_PREFIXES[role]
    codes = Person.objects.filter(code__startswith=f"{prefix}-").values_list("code", flat=True)
    highest = max(
        (int(c.split("-", 1)[1]) for c in codes if c.split("-", 1)[1].isdigit()), default=0
    )
    return f"{prefix}-{highest + 1:04d}"


def _index_names(person: Person, identity: Identity) -> None:
    digests = {d for d in map(crypto.blind_index, identity.names()) if d}
    NameDigest.objects.filter(person=person).exclude(digest__in=digests).delete()
    have = set(NameDigest.objects.filter(person=person).values_list("digest", flat=True))
    NameDigest.objects.bulk_create(
        [NameDigest(person=person, digest=d) for d in sorted(digests - have)]
    )


def reindex_names(person: Person) -> None:
    """Rebuild a person's name index from their identity (after their identity is sealed
    again by ``rotate_keys``, so a new index key takes effect too)."""
    _index_names(person, person.open_identity())


def register_person(
    *,
    actor: Account,
    case: Case,
    role: str,
    identity: Identity,
    protection_level: str = Person.Protection.STANDARD,
    **victim: Any,
) -> Person:
    """Register a person in a case under a new code; their identity is stored encrypted."""
    _require(actor, Action.ADD_PEOPLE, case)
    unknown = set(victim) - set(VICTIM_FIELDS)
    if unknown:
        raise TypeError(f"unknown fields: {sorted(unknown)}")
    if not (identity.name_ar.strip() or identity.name_latin.strip()):
        raise ValidationError(_("Give the name in Arabic or in Latin script."))
    for attempt in range(5):
        person = Person(case=case, protection_level=protection_level, created_by=actor, **victim)
        person.seal_identity(identity)
        person.code = _next_code(role)
        person.full_clean(exclude=["code"])
        try:
            with transaction.atomic(durable=True):
                person.save(force_insert=True)
                CaseRole.objects.create(person=person, case=case, role=role, recorded_by=actor)
                _index_names(person, identity)
                audit.record(
                    actor,
                    "people.register",
                    target=person,
                    case=case,
                    binds={Person: [person.pk]},  # the victim's details, as registered
                    code=person.code,
                    role=role,
                    protection_level=protection_level,
                )
            return person
        except IntegrityError:
            # Another registration took the same code meanwhile: take the next one.
            if attempt == 4:
                raise
    raise AssertionError("unreachable")


def add_case_role(*, actor: Account, person: Person, case: Case, role: str) -> CaseRole:
    """Give a registered person a (further) role, in their case or another one."""
    _require(actor, Action.ADD_PEOPLE, case)
    _require(actor, Action.ADD_PEOPLE, person.case)
    if (
        case.pk != person.case_id
        and person.protection_level != Person.Protection.STANDARD
        and not CaseRole.objects.filter(person=person, case=case).exists()
    ):
        # A first role in another case opens the identity to that case's lead (and, at
        # High, to the interviewers there): a disclosure made only by someone who may
        # already reveal this person in their own case, or a lead of one case could reach
        # the protected people of any other case they also work in.
        _require(actor, Action.REVEAL_IDENTITY, person.case)
        if refusal := reveal_refusal(actor, person, person.case):
            raise PermissionDenied(refusal)
    if CaseRole.objects.filter(person=person, case=case, role=role).exists():
        raise ValidationError(_("This person already has that role in the case."))
    with transaction.atomic(durable=True):
        case_role = CaseRole.objects.create(person=person, case=case, role=role, recorded_by=actor)
        audit.record(actor, "people.add_role", target=person, case=case, role=role)
    return case_role


def relate_people(
    *, actor: Account, case: Case, person: Person, kind: str, other: Person
) -> Relation:
    """Record that ``person`` is ``kind`` of ``other`` (both must belong to the case)."""
    _require(actor, Action.ADD_PEOPLE, case)
    if person.pk == other.pk:
        raise ValidationError(_("A person cannot be related to themselves."))
    in_case = set(
        CaseRole.objects.filter(case=case, person__in=[person, other]).values_list(
            "person_id", flat=True
        )
    )
    if in_case != {person.pk, other.pk}:
        raise ValidationError(_("Both people must have a role in this case."))
    if Relation.objects.filter(person=person, kind=kind, other=other).exists():
        raise ValidationError(_("This relation is already recorded."))
    with transaction.atomic(durable=True):
        relation = Relation.objects.create(
            case=case, person=person, kind=kind, other=other, recorded_by=actor
        )
        audit.record(
            actor,
            "people.relate",
            target=person,
            case=case,
            kind=kind,
            other=other.code,
        )
    return relation
