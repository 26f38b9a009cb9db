"""The per-person protection rule: who may reveal a person's identity, log their
testimony, read their statements, see evidence attached to them, and change their level.

Need to know, by protection level (standard, high, critical). The case-wide part of the
policy (roles, what each may do, ``can``) is the core's, in ``casefiles.access``; this
module adds what depends on the person, and every page, service and export of people and
evidence asks here.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from casefiles.access import (
    ROLE_ACTIONS,
    Action,
    Role,
    can,
    case_ids_with_role,
    is_active_account,
    role_in,
    visible_case_ids,
)

from .models import Person, Testimony

if TYPE_CHECKING:
    from django.contrib.auth.models import User as Account

    from casefiles.access import User
    from casefiles.models import Case


def _protection_bars(user: User | None, person: Any, case: Case) -> str | None:
    """The protection level that keeps the person's identity from ``user`` in ``case``
    ("high" or "critical"), or None when it does not."""

    level = person.protection_level
    if level == Person.Protection.STANDARD:
        return None
    if not is_active_account(user):
        return level
    if role_in(user, case) == Role.LEAD or person.created_by_id == user.pk:
        return None
    if level == Person.Protection.HIGH and _interviewed_by(user, person, case):
        return None
    return level


_INTERVIEWED = "_athar_interviewed_by"


def forget_interviewers(person: Any) -> None:
    """Drop what ``_interviewed_by`` kept on ``person``: a testimony naming interviewers
    was logged, so who may reveal them has changed."""
    person.__dict__.pop(_INTERVIEWED, None)


def note_interviewers(user: User | None, people: Iterable[Any], cases: Iterable[Case]) -> None:
    """Answer ``_interviewed_by`` for ``user``, each of ``people`` and each of ``cases`` in
    one query, kept on the person objects as it keeps its own answers: a page that asks
    about many people (a name search) then asks no more per person."""
    if not is_active_account(user):
        return
    high = [p for p in people if p.protection_level == Person.Protection.HIGH]
    case_ids = [c.pk for c in cases]
    if not high or not case_ids:
        return
    interviewed = set(
        Testimony.objects.filter(
            witness__in=[p.pk for p in high], case__in=case_ids, interviewers=user
        ).values_list("witness_id", "case_id")
    )
    for person in high:
        asked = person.__dict__.setdefault(_INTERVIEWED, {})
        for case_id in case_ids:
            asked.setdefault((user.pk, case_id), (person.pk, case_id) in interviewed)


def _interviewed_by(user: Account, person: Any, case: Case) -> bool:
    """Did ``user`` interview ``person`` for a testimony in ``case``? Asked once per
    request: the answer is kept on the person object (each request loads its own), as
    a page asks it for the reveal, the testimony form and the protection form."""
    asked = person.__dict__.setdefault(_INTERVIEWED, {})
    key = (user.pk, case.pk)
    if key not in asked:
        asked[key] = Testimony.objects.filter(case=case, witness=person, interviewers=user).exists()
    return asked[key]


def reveal_refusal(user: User | None, person: Any, case: Case) -> str | None:
    """Why the person's protection level keeps their identity from ``user`` (else None),
    for someone whose role allows revealing identities in ``case`` (``can`` says that).

    Need to know. Standard: every such role. High: of those, the case lead, whoever
    registered the person, and the interviewers of their testimony in this case.
    Critical: the case lead and whoever registered the person, no one else.

    Naming the interviewers is itself kept to those who may reveal already (see
    ``testimony_refusal``): nobody can make themselves an interviewer to get the reveal.
    """

    level = _protection_bars(user, person, case)
    if level is None:
        return None
    if level == Person.Protection.HIGH:
        return str(
            _(
                "High protection: only the case lead, whoever registered this person and "
                "the interviewers of their testimony may reveal the identity; only they may "
                "log a testimony of this person (and so name its interviewers)."
            )
        )
    return str(
        _(
            "Critical protection: only the case lead and whoever registered this person "
            "may reveal the identity or log a testimony of this person."
        )
    )


def testimony_refusal(user: User | None, person: Any, case: Case) -> str | None:
    """Why ``user`` may not log a testimony of ``person`` in ``case`` (else None).

    The interviewers a testimony names may reveal a High-protection identity, so a
    testimony of a High or Critical protection person is logged only by someone who may
    already reveal it: the case lead, whoever registered the person, and (High) an
    interviewer of their testimony. Anyone else could otherwise name themselves.
    """

    level = _protection_bars(user, person, case)
    if level is None:
        return None
    if level == Person.Protection.HIGH:
        return str(
            _(
                "High protection: only the case lead, whoever registered this person and "
                "the interviewers of their testimony may log a testimony of this person."
            )
        )
    return str(
        _(
            "Critical protection: only the case lead and whoever registered this person "
            "may log a testimony of this person."
        )
    )


def statement_refusal(user: User | None, witness: Any, case: Case) -> str | None:
    """Why the statements ``witness`` gave in ``case`` are kept from ``user`` (else None).

    Need to know. Standard protection: every member reads them. High and Critical: the
    members whose role and the witness's protection level let them reveal the witness
    (``reveal_refusal``), and the case's lawyers, who review and approve statements.
    Any other member sees that a testimony exists, when it was taken and its status: not
    its text, its changes between versions, nor the form that would show the text.

    Whether this session signed in with a security key (which a reveal may also need)
    plays no part: who may read is a matter of role and protection, not of the device.
    """

    role = role_in(user, case)
    if role is None:
        return str(_("Only members of the case read its statements."))
    if witness.protection_level == Person.Protection.STANDARD or role == Role.LAWYER:
        return None
    may_reveal = Action.REVEAL_IDENTITY in ROLE_ACTIONS[role]
    if may_reveal and _protection_bars(user, witness, case) is None:
        return None
    if witness.protection_level == Person.Protection.HIGH:
        return str(
            _(
                "High protection: only the members who may reveal this witness and the "
                "case's lawyers read the statement."
            )
        )
    return str(
        _(
            "Critical protection: only the members who may reveal this witness and the "
            "case's lawyers read the statement."
        )
    )


def withheld_testimonies(user: User | None, case: Case | None = None) -> models.QuerySet:
    """The testimonies whose statement ``statement_refusal`` keeps from ``user``, in
    ``case`` (or in every case, when None), as a lazy query of their ids: the same rule,
    for many at once.

    Evidence attached to such a testimony (a recording, a scanned statement) is the
    statement in another form, so it is withheld too (``attachment_refusal``). Pages and
    the API read through the apps' reads modules, which use this as a subquery (one rule,
    no query per item): ``people.reads.withheld``.
    """

    if case is None:
        return _withheld_anywhere(user)
    testimonies = Testimony.objects.filter(case=case)
    role = role_in(user, case)
    if role is None or not is_active_account(user):
        return testimonies.values("pk")
    if role in _READ_EVERY_STATEMENT:
        return testimonies.none().values("pk")
    protected = testimonies.exclude(witness__protection_level=Person.Protection.STANDARD)
    if Action.REVEAL_IDENTITY not in ROLE_ACTIONS[role]:
        return protected.values("pk")
    # As ``_protection_bars``: whoever registered the witness reads; for High, so do the
    # interviewers of any testimony of the witness in this case.
    interviewed = Testimony.objects.filter(case=case, interviewers=user).values("witness")
    return (
        protected.exclude(witness__created_by=user)
        .exclude(witness__protection_level=Person.Protection.HIGH, witness__in=interviewed)
        .values("pk")
    )


# The lead reads every statement of their case (``_protection_bars``), a lawyer too
# (``statement_refusal``).
_READ_EVERY_STATEMENT = frozenset({Role.LEAD, Role.LAWYER})


def _withheld_anywhere(user: User | None) -> models.QuerySet:
    """``withheld_testimonies`` across every case at once, by the role ``user`` holds in
    each: what a list spanning cases (the API's) needs, in one subquery."""
    testimonies = Testimony.objects.all()
    if not is_active_account(user):
        return testimonies.values("pk")
    others = set(Role.values) - _READ_EVERY_STATEMENT
    revealing = {r for r in others if Action.REVEAL_IDENTITY in ROLE_ACTIONS[r]}
    interviewed = Testimony.objects.filter(
        case=models.OuterRef("case"), witness=models.OuterRef("witness"), interviewers=user
    )
    protected = ~Q(witness__protection_level=Person.Protection.STANDARD)
    may_read_protected = Q(case__in=case_ids_with_role(user, revealing)) & (
        Q(witness__created_by=user)
        | (Q(witness__protection_level=Person.Protection.HIGH) & models.Exists(interviewed))
    )
    withheld = ~Q(case__in=visible_case_ids(user)) | (
        protected & Q(case__in=case_ids_with_role(user, others)) & ~may_read_protected
    )
    return testimonies.filter(withheld).values("pk")


def attachment_refusal(user: User | None, item: Any) -> str | None:
    """Why the evidence ``item`` is kept from ``user`` (else None): it is attached to a
    testimony whose statement ``user`` may not read (``statement_refusal``).

    Such an item shows only that it exists, its reference and why it is withheld: no
    title, description, filename, metadata, thumbnail, preview or original.
    """
    if item.testimony_id is None:
        return None
    return statement_refusal(user, item.testimony.witness, item.case)


def _lowering_refusal(user: User | None, person: Any, case: Case, level: str) -> str | None:
    """Why ``user`` may not set ``person``'s protection to ``level`` when it is lower than
    now: only the case lead lowers a level, which opens the identity to more members."""
    levels = list(person.Protection.values)  # standard < high < critical
    if level not in levels or levels.index(level) >= levels.index(person.protection_level):
        return None
    if role_in(user, case) == Role.LEAD:
        return None
    return str(_("Only the case lead lowers a protection level."))


def protection_change_refusal(
    user: User | None, person: Any, case: Case, level: str | None = None
) -> str | None:
    """Why ``user`` may not change the protection level of ``person`` (to ``level``, when
    given) in ``case``, the person's own case; None when they may.

    Whoever may reveal the person now (``can`` and ``reveal_refusal``) may raise the
    level; lowering it, which opens the identity to more members, only the case lead.
    The service that changes it and the person page that offers the form both ask here.
    """
    if not can(user, Action.REVEAL_IDENTITY, case):
        return str(_("Your role does not allow changing this person's protection level."))
    if refusal := reveal_refusal(user, person, case):
        return refusal
    return _lowering_refusal(user, person, case, level) if level is not None else None


def protection_levels_for(user: User | None, person: Any, case: Case) -> list[str]:
    """The levels ``user`` may set ``person``'s protection to now, by the rule of
    ``protection_change_refusal``; empty when they may not change it at all."""
    if protection_change_refusal(user, person, case):
        return []
    return [
        level
        for level in person.Protection.values
        if level != person.protection_level and _lowering_refusal(user, person, case, level) is None
    ]
