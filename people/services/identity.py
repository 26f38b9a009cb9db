"""A person's identity: who may see it (reveal, protection level), changing the names,
and looking a name up through its blind index."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.utils.translation import gettext as _

from casefiles import audit
from casefiles.access import Action
from casefiles.models import AuditEntry, Case

from .. import crypto
from ..models import (
    PROTECTED_FIELDS,
    CaseRole,
    Identity,
    Person,
    ProtectionChange,
    parts_json,
)
from ..protection import (
    protection_change_refusal,
    reveal_refusal,
)
from .common import _require
from .registration import _index_names

if TYPE_CHECKING:
    from django.contrib.auth.models import User as Account


def change_protection(
    *, actor: Account, person: Person, level: str, reason: str
) -> ProtectionChange:
    """Raise or lower a person's protection level, saying why.

    Only someone who may reveal the person now changes it; lowering it (which opens the
    identity to more members) only the lead of the person's case. The change is a row of
    its own (append-only, bound into the audit chain) written before the level: the
    database refuses a level that no such row records.
    """
    case = person.case
    if refusal := protection_change_refusal(actor, person, case):
        raise PermissionDenied(refusal)
    if level not in Person.Protection.values:
        raise ValidationError(_("Choose a protection level."))
    reason = reason.strip()
    if len(reason) < 5:
        raise ValidationError({"reason": _("Say why the protection level changes.")})
    with transaction.atomic(durable=True):
        locked = Person.objects.select_for_update().get(pk=person.pk)
        old = locked.protection_level
        if level == old:
            raise ValidationError(_("The person already has this protection level."))
        # Asked again of the locked row: the level it lowers from is the one now.
        if refusal := protection_change_refusal(actor, locked, case, level):
            raise PermissionDenied(refusal)
        change = ProtectionChange.objects.create(
            person=locked, from_level=old, to_level=level, reason=reason, changed_by=actor
        )
        Person.objects.filter(pk=locked.pk).update(protection_level=level)
        audit.record(
            actor,
            "people.protection_change",
            target=locked,
            case=case,
            binds={ProtectionChange: [change.pk]},
            from_level=old,
            to_level=level,
            reason=reason[:1000],
        )
    person.protection_level = level
    return change


def reveal_identity(*, actor: Account, case: Case, person: Person, reason: str) -> Identity:
    """Decrypt a person's identity for one page view; the reveal and its reason are audited.

    The entry is written before anything is returned: no reveal without its trace.
    """
    _require(actor, Action.REVEAL_IDENTITY, case)
    if not CaseRole.objects.filter(person=person, case=case).exists():
        raise PermissionDenied("person has no role in this case")
    if refusal := reveal_refusal(actor, person, case):
        raise PermissionDenied(refusal)
    reason = reason.strip()
    if len(reason) < 5:
        raise ValidationError(_("State why you need to see this identity."))
    identity = open_or_audit(
        person.open_identity,
        actor=actor,
        action="people.reveal_failed",
        target=person,
        case=case,
        reason=reason[:1000],
    )
    with transaction.atomic(durable=True):
        audit.record(
            actor, "people.reveal_identity", target=person, case=case, reason=reason[:1000]
        )
    return identity


def open_or_audit[T](opener: Callable[[], T], *, actor, action: str, target, case, **details) -> T:
    """``opener()`` (a reveal's decryption), or, when a sealed column does not open for
    its row, the failed reveal audited as ``action`` in its own transaction (its trace
    stays), naming the table, row and column, and ``SealedValueBroken`` raised. Every
    reveal of a sealed value goes through here (people's identity, missing's profile)."""
    try:
        return opener()
    except crypto.SealBroken as broken:
        with transaction.atomic(durable=True):
            audit.record(
                actor,
                action,
                target=target,
                case=case,
                table=broken.table,
                row=str(broken.row),
                column=broken.column,
                found=broken.found,
                **details,
            )
        raise SealedValueBroken(broken) from broken


class SealedValueBroken(Exception):
    """A reveal found a sealed column that does not open for its row (moved, altered or
    under a key no longer configured): refused, and audited (``people.reveal_failed``)."""

    def __init__(self, broken: crypto.SealBroken):
        super().__init__(str(broken))
        self.broken = broken


def seal_failures(person: Person) -> bool:
    """Whether a reveal of ``person`` found a sealed column that does not open: the
    person's page warns of it (one query)."""
    return AuditEntry.objects.filter(
        action="people.reveal_failed",
        target_type=f"{person._meta.app_label}.{person._meta.model_name}",
        target_id=str(person.pk),
    ).exists()


NAME_FIELDS = ("name_ar", "name_latin", "aliases", "name_parts")


def change_names(
    *,
    actor: Account,
    case: Case,
    person: Person,
    name_ar: str,
    name_latin: str,
    aliases: str,
    parts: dict[str, str],
) -> list[str]:
    """Change a person's names: full names, aliases and the name's parts (both scripts).

    Only someone who may reveal the person changes them (they see them to change them).
    Stored encrypted as the rest of the identity; the audit entry names which of the
    fields changed, never a name. Returns the fields changed (none: nothing written).
    """
    _require(actor, Action.REVEAL_IDENTITY, case)
    _require(actor, Action.ADD_PEOPLE, case)
    if not CaseRole.objects.filter(person=person, case=case).exists():
        raise PermissionDenied("person has no role in this case")
    if refusal := reveal_refusal(actor, person, case):
        raise PermissionDenied(refusal)
    if not (name_ar.strip() or name_latin.strip()):
        raise ValidationError(_("Give the name in Arabic or in Latin script."))
    with transaction.atomic(durable=True):
        locked = Person.objects.select_for_update().get(pk=person.pk)
        old = locked.open_identity()
        new = replace(
            old,
            name_ar=name_ar.strip(),
            name_latin=name_latin.strip(),
            aliases="\n".join(a.strip() for a in aliases.splitlines() if a.strip()),
            name_parts=parts_json(parts),
        )
        changed = [n for n in NAME_FIELDS if getattr(old, n) != getattr(new, n)]
        if not changed:
            return []
        locked.seal_identity(new)
        locked.save(update_fields=[f"enc_{n}" for n in PROTECTED_FIELDS])
        _index_names(locked, new)
        audit.record(actor, "people.names", target=locked, case=case, changed=changed)
    return changed


def find_people_by_name(*, actor: Account, case: Case, name: str) -> list[Person]:
    """People of this case registered under this name (or a spelling of it).

    Compares keyed digests of normalised names: nothing is decrypted. Only this case is
    searched, where the actor may reveal identities: a match in another case would tell
    who someone is there without that case's permission or audit trail; and only people
    whose identity the actor may reveal are returned. Audited without the name, since a
    match tells who someone is.
    """
    _require(actor, Action.REVEAL_IDENTITY, case)
    digest = crypto.blind_index(name)
    if not digest:
        return []
    matched = list(
        Person.objects.visible_to(actor)
        .filter(case_roles__case=case, name_digests__digest=digest)
        .distinct()
    )
    # A match names who someone is: not for those their protection level keeps it from.
    found = [p for p in matched if reveal_refusal(actor, p, case) is None]
    with transaction.atomic(durable=True):
        audit.record(
            actor,
            "people.name_lookup",
            case=case,
            matches=[p.code for p in found],
            withheld=len(matched) - len(found),
        )
    return found
