"""Consent: recorded, withdrawn in part, and asked before a statement is shared."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import TYPE_CHECKING

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils.translation import gettext as _

from casefiles import audit
from casefiles.access import Action
from casefiles.models import Case

from ..models import (
    Consent,
    ConsentScope,
    Person,
    Testimony,
)
from .common import _require

if TYPE_CHECKING:
    from django.contrib.auth.models import User as Account


def record_consent(
    *,
    actor: Account,
    case: Case,
    person: Person,
    scopes: list[str],
    how: str,
    given_on: date,
    bodies: str = "",
    notes: str = "",
) -> Consent:
    """Record a consent the person gave, for the listed scopes."""
    _require(actor, Action.ADD_TESTIMONY, case)
    scopes = sorted(set(scopes))
    if not scopes or not set(scopes) <= set(ConsentScope.values):
        raise ValidationError(_("Choose at least one scope."))
    if ConsentScope.SHARING in scopes and not bodies.strip():
        raise ValidationError(_("Name the bodies the testimony may be shared with."))
    consent = Consent(
        person=person,
        case=case,
        kind=Consent.Kind.GRANT,
        scopes=scopes,
        bodies=bodies.strip(),
        how=how,
        given_on=given_on,
        notes=notes,
        recorded_by=actor,
    )
    consent.full_clean()
    with transaction.atomic(durable=True):
        consent.save()
        audit.record(
            actor,
            "consent.record",
            target=consent,
            case=case,
            binds={Consent: [consent.pk]},
            person=person.code,
            scopes=scopes,
            how=how,
            given_on=given_on.isoformat(),
        )
    return consent


def withdraw_consent(
    *,
    actor: Account,
    consent: Consent,
    how: str,
    given_on: date,
    scopes: list[str] | None = None,
    notes: str = "",
) -> Consent:
    """Withdraw some or all scopes of a consent: a new record, the old one stays."""
    _require(actor, Action.ADD_TESTIMONY, consent.case)
    if consent.kind != Consent.Kind.GRANT:
        raise ValidationError(_("Only a consent that was given can be withdrawn."))
    scopes = sorted(set(scopes or consent.scopes))
    if not set(scopes) <= set(consent.scopes):
        raise ValidationError(_("Only scopes of this consent can be withdrawn."))
    withdrawal = Consent(
        person=consent.person,
        case=consent.case,
        kind=Consent.Kind.WITHDRAWAL,
        scopes=scopes,
        how=how,
        given_on=given_on,
        withdraws=consent,
        notes=notes,
        recorded_by=actor,
    )
    withdrawal.full_clean()
    with transaction.atomic(durable=True):
        withdrawal.save()
        audit.record(
            actor,
            "consent.withdraw",
            target=withdrawal,
            case=consent.case,
            binds={Consent: [withdrawal.pk]},
            person=consent.person.code,
            withdraws=consent.pk,
            scopes=scopes,
        )
    return withdrawal


def consent_in_force(consent: Consent) -> list[str]:
    """The scopes of a given consent not withdrawn since."""
    withdrawn = {s for w in consent.withdrawals.all() for s in w.scopes}
    return [s for s in consent.scopes if s not in withdrawn]


@dataclass(frozen=True)
class SharingAnswer:
    allowed: bool
    reason: str
    consent: Consent | None = None

    def __bool__(self) -> bool:
        return self.allowed


def may_share_testimony(*, testimony: Testimony, purpose: str, body: str = "") -> SharingAnswer:
    """May this testimony be used for ``purpose`` (a ConsentScope), e.g. before an export?

    Yes when the witness gave consent for that scope in the testimony's case and has not
    withdrawn it; for sharing, the body must be one the consent names.
    """
    return _sharing_answer(_grants_of(testimony), purpose, body)


def sharing_answers(*, testimony: Testimony, purposes: list[str]) -> dict[str, SharingAnswer]:
    """``may_share_testimony`` for several purposes at once, from one read of the consent."""
    grants = _grants_of(testimony)
    return {purpose: _sharing_answer(grants, purpose, "") for purpose in purposes}


def _grants_of(testimony: Testimony) -> list[Consent]:
    return list(
        Consent.objects.filter(
            person=testimony.witness, case=testimony.case, kind=Consent.Kind.GRANT
        )
        .prefetch_related("withdrawals")
        .order_by("-given_on", "-pk")
    )


def _sharing_answer(grants: list[Consent], purpose: str, body: str) -> SharingAnswer:
    if purpose not in ConsentScope.values:
        raise ValueError(f"unknown purpose {purpose!r}")
    asked = body.strip().casefold()
    saw_withdrawn = False
    for grant in grants:
        if purpose not in grant.scopes:
            continue
        if purpose not in consent_in_force(grant):
            saw_withdrawn = True
            continue
        if purpose == ConsentScope.SHARING and asked not in {
            b.casefold() for b in grant.body_list()
        }:
            continue
        return SharingAnswer(True, _("Consent given on %s.") % grant.given_on, grant)
    if saw_withdrawn:
        return SharingAnswer(False, _("Consent for this purpose was withdrawn."))
    return SharingAnswer(False, _("No consent for this purpose."))
