"""A victim's status: one field of the person (missing, detained, deceased, identified,
released), changed here only, whoever changes it (this app's person page, or the apps
above through ``set_victim_status_within``). Each change is audited and announced to
``hooks.when_victim_status_changed`` in the same transaction."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.utils.translation import gettext as _

from casefiles import audit
from casefiles.access import Action
from casefiles.models import Case

from .. import hooks
from ..models import CaseRole, Person
from .common import _require

if TYPE_CHECKING:
    from django.contrib.auth.models import User as Account


def set_victim_status_within(
    *, actor: Account, case: Case, person: Person, status: str, reason: str = ""
) -> bool:
    """Inside the caller's (durable) transaction: move ``person``'s victim status to
    ``status``, tell the registered hooks, then write the audit entry (of ``case``).
    False when the status was already so (nothing written)."""
    if not transaction.get_connection().in_atomic_block:
        raise RuntimeError("set_victim_status_within runs inside a transaction")
    if status and status not in Person.VictimStatus.values:
        raise ValidationError({"victim_status": _("Choose a status from the list.")})
    locked = Person.objects.select_for_update().only("pk", "victim_status").get(pk=person.pk)
    old = locked.victim_status
    if status == old:
        person.victim_status = status
        return False
    Person.objects.filter(pk=person.pk).update(victim_status=status)
    person.victim_status = status
    written = hooks.victim_status_changed_within(actor, person, old, status, reason.strip()[:500])
    written.setdefault(Person, []).append(person.pk)  # the person's new state, bound
    audit.record(
        actor,
        "people.victim_status",
        target=person,
        case=case,
        binds=written,
        old=old,
        new=status,
    )
    return True


def change_victim_status(
    *, actor: Account, case: Case, person: Person, status: str, reason: str = ""
) -> bool:
    """Change a victim's status from the person's page: by whoever may register people
    in a case the person has a role in. False when it was already so."""
    _require(actor, Action.ADD_PEOPLE, case)
    if not CaseRole.objects.filter(case=case, person=person).exists():
        raise PermissionDenied("person has no role in this case")
    if status and status not in Person.VictimStatus.values:
        raise ValidationError({"victim_status": _("Choose a status from the list.")})
    with transaction.atomic(durable=True):
        return set_victim_status_within(
            actor=actor, case=case, person=person, status=status, reason=reason
        )
