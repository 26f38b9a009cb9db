"""Every change to an incident: one durable transaction, which appends the incident's
new version (its whole state, bound into the audit chain) and the audit entry.

Writers are the members who document people (leads and investigators:
``Action.ADD_PEOPLE``); a system admin who is no member writes nothing here.
"""

from __future__ import annotations

from datetime import date
from typing import TYPE_CHECKING, Any

from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.utils.translation import gettext as _

from casefiles import audit
from casefiles.access import Action, can
from casefiles.models import Case
from evidence.models import EvidenceItem
from legal.models import LegalElement
from people.models import CaseRole, Person, Testimony
from places.models import Place
from vocabularies.models import Scheme, Term

from ..models import Act, Incident, IncidentVersion, Link, Perpetrator, Precision, span
from ..snapshots import sha256_of, state_of

if TYPE_CHECKING:
    from django.contrib.auth.models import User as Account

REFERENCE = "IN-{:04d}"


def _require_writer(actor: Account, case: Case) -> None:
    if not can(actor, Action.ADD_PEOPLE, case):
        raise PermissionDenied(_("Your role in this case does not allow this step."))


def _when(precision: str, starts_on: date | None, ends_on: date | None) -> tuple[Any, Any]:
    """The stored first and last day, or a clear error."""
    if not precision and starts_on is None and ends_on is None:
        return None, None
    if starts_on is None:
        raise ValidationError({"starts_on": _("Give the date, or leave the precision empty.")})
    if not precision:
        raise ValidationError({"precision": _("Say how precise the date is.")})
    if precision == Precision.RANGE:
        if ends_on is None:
            raise ValidationError({"ends_on": _("A range needs its last day.")})
        if ends_on < starts_on:
            raise ValidationError({"ends_on": _("The range ends before it starts.")})
    return span(precision, starts_on, ends_on)


def _check_text(title_en: str, title_ar: str) -> None:
    if not title_en.strip() and not title_ar.strip():
        raise ValidationError(_("Give the incident a title in Arabic or in English."))


def _term(term: Term | None, scheme: str, field: str, *, required: bool = True) -> None:
    if term is None:
        if required:
            raise ValidationError({field: _("This field is required.")})
        return
    if term.scheme != scheme:
        raise ValidationError({field: _("That term is from another vocabulary.")})
    # As stored now: it may have been retired since the form offered it.
    if not Term.objects.filter(pk=term.pk, retired_at__isnull=True).exists():
        raise ValidationError({field: _("That term is retired: choose a current one.")})


def _of_case(person: Person, case: Case, field: str) -> None:
    if not CaseRole.objects.filter(case=case, person=person).exists():
        raise ValidationError({field: _("That person is not in this case.")})


def _version_within(actor: Account, incident: Incident, change: str, **details: Any) -> None:
    """Append the incident's new version and the audit entry that binds it (inside the
    caller's transaction, after its writes)."""
    incident.version += 1
    incident.save(update_fields=["version", "updated_at"])
    state = state_of(incident)
    version = IncidentVersion.objects.create(
        incident=incident,
        number=incident.version,
        change=change,
        state=state,
        sha256=sha256_of(state),
        author=actor,
    )
    audit.record(
        actor,
        change,
        target=incident,
        case=incident.case,
        binds={IncidentVersion: [version.pk]},
        version=version.number,
        **details,
    )


def _locked(incident: Incident, expected_version: int | None = None) -> Incident:
    locked = Incident.objects.select_for_update().select_related("case").get(pk=incident.pk)
    if expected_version is not None and locked.version != expected_version:
        raise ValidationError(
            _(
                "Someone changed this incident while you were editing it (now version "
                "%(version)s): look at it again, then make your change."
            )
            % {"version": locked.version}
        )
    return locked


def create_incident(
    *,
    actor: Account,
    case: Case,
    title_en: str = "",
    title_ar: str = "",
    description_en: str = "",
    description_ar: str = "",
    precision: str = "",
    starts_on: date | None = None,
    ends_on: date | None = None,
    place: Place | None = None,
) -> Incident:
    _require_writer(actor, case)
    _check_text(title_en, title_ar)
    starts, ends = _when(precision, starts_on, ends_on)
    with transaction.atomic(durable=True):
        Case.objects.select_for_update().filter(pk=case.pk).exists()  # one reference at once
        number = Incident.objects.filter(case=case).count() + 1
        incident = Incident(
            case=case,
            reference=REFERENCE.format(number),
            title_en=title_en.strip(),
            title_ar=title_ar.strip(),
            description_en=description_en.strip(),
            description_ar=description_ar.strip(),
            precision=precision,
            starts_on=starts,
            ends_on=ends,
            place=place,
            created_by=actor,
        )
        incident.full_clean(exclude=["case", "created_by"])
        incident.save()
        _version_within(actor, incident, "incident.create")
    return incident


def update_incident(
    *,
    actor: Account,
    incident: Incident,
    expected_version: int | None = None,
    title_en: str = "",
    title_ar: str = "",
    description_en: str = "",
    description_ar: str = "",
    precision: str = "",
    starts_on: date | None = None,
    ends_on: date | None = None,
    place: Place | None = None,
) -> Incident:
    """New text, date or place; the acts and links stay. ``expected_version`` is the
    version the editor saw: a change made meanwhile is refused, not overwritten."""
    _require_writer(actor, incident.case)
    _check_text(title_en, title_ar)
    starts, ends = _when(precision, starts_on, ends_on)
    with transaction.atomic(durable=True):
        locked = _locked(incident, expected_version)
        fields = {
            "title_en": title_en.strip(),
            "title_ar": title_ar.strip(),
            "description_en": description_en.strip(),
            "description_ar": description_ar.strip(),
            "precision": precision,
            "starts_on": starts,
            "ends_on": ends,
            "place": place,
        }
        changed = sorted(k for k, v in fields.items() if getattr(locked, k) != v)
        if not changed:
            return locked
        for name, value in fields.items():
            setattr(locked, name, value)
        locked.full_clean(exclude=["case", "created_by"])
        locked.save()
        _version_within(actor, locked, "incident.update", changed=changed)
    return locked


def add_act(
    *,
    actor: Account,
    incident: Incident,
    victim: Person,
    act_type: Term,
    method: Term | None = None,
    unit: Term | None = None,
    perpetrator: Person | None = None,
    involvement: Term | None = None,
) -> Act:
    """An act against one victim of the case, with its first perpetrator if known (a unit
    or a person, with a degree of involvement)."""
    case = incident.case
    _require_writer(actor, case)
    _of_case(victim, case, "victim")
    _term(act_type, Scheme.ACT_TYPE, "act_type")
    _term(method, Scheme.METHOD, "method", required=False)
    who = _perpetrator_fields(case, unit, perpetrator, involvement, optional=True)
    with transaction.atomic(durable=True):
        locked = _locked(incident)
        act = Act.objects.create(incident=locked, victim=victim, act_type=act_type, method=method)
        if who:
            Perpetrator.objects.create(act=act, **who)
        _version_within(
            actor,
            locked,
            "incident.act_add",
            act=act.pk,
            victim=victim.code,
            act_type=act_type.code,
        )
    return act


def _perpetrator_fields(
    case: Case,
    unit: Term | None,
    person: Person | None,
    involvement: Term | None,
    *,
    optional: bool = False,
) -> dict[str, Any]:
    if unit is None and person is None and involvement is None and optional:
        return {}
    if (unit is None) == (person is None):
        raise ValidationError(_("Name the perpetrator as a unit or as a person, not both."))
    if unit is not None:
        _term(unit, Scheme.PERPETRATOR_TYPE, "unit")
    if person is not None:
        _of_case(person, case, "perpetrator")
    _term(involvement, Scheme.INVOLVEMENT, "involvement")
    return {"unit": unit, "person": person, "involvement": involvement}


def add_perpetrator(
    *,
    actor: Account,
    act: Act,
    unit: Term | None = None,
    person: Person | None = None,
    involvement: Term | None = None,
) -> Perpetrator:
    incident = act.incident
    _require_writer(actor, incident.case)
    who = _perpetrator_fields(incident.case, unit, person, involvement)
    with transaction.atomic(durable=True):
        locked = _locked(incident)
        if not Act.objects.filter(pk=act.pk, incident=locked).exists():
            # removed (remove_act, which takes the same lock) since the form was loaded
            raise ValidationError(
                _("This act was removed from the incident meanwhile: look at the incident again.")
            )
        perpetrator = Perpetrator.objects.create(act=act, **who)
        _version_within(
            actor,
            locked,
            "incident.perpetrator_add",
            act=act.pk,
            unit=unit.code if unit else None,
            person=person.code if person else None,
        )
    return perpetrator


def remove_act(*, actor: Account, act: Act) -> None:
    """The act leaves the incident's current state; earlier versions keep it."""
    incident = act.incident
    _require_writer(actor, incident.case)
    with transaction.atomic(durable=True):
        locked = _locked(incident)
        Perpetrator.objects.filter(act=act).delete()
        Act.objects.filter(pk=act.pk, incident=locked).delete()
        _version_within(actor, locked, "incident.act_remove", act=act.pk)


Linkable = EvidenceItem | Testimony | LegalElement


def link_record(*, actor: Account, incident: Incident, record: Linkable) -> Link:
    case = incident.case
    _require_writer(actor, case)
    if isinstance(record, LegalElement):
        if record.retired_at is not None:
            raise ValidationError(_("That legal element is retired."))
        fields: dict[str, Any] = {"element": record}
        label = record.code
    else:
        if record.case_id != case.pk:
            raise ValidationError(_("That record is not in this case."))
        if isinstance(record, EvidenceItem):
            fields, label = {"item": record}, record.reference
        else:
            fields, label = {"testimony": record}, f"T-{record.pk:04d}"
    with transaction.atomic(durable=True):
        locked = _locked(incident)
        if Link.objects.filter(incident=locked, **fields).exists():
            raise ValidationError(_("The incident is linked to that record already."))
        link = Link.objects.create(incident=locked, **fields)
        _version_within(actor, locked, "incident.link", record=label)
    return link


def unlink_record(*, actor: Account, link: Link) -> None:
    incident = link.incident
    _require_writer(actor, incident.case)
    with transaction.atomic(durable=True):
        locked = _locked(incident)
        label = link.label
        Link.objects.filter(pk=link.pk, incident=locked).delete()
        _version_within(actor, locked, "incident.unlink", record=label)
