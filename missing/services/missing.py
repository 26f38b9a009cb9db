"""Writes of the missing app: each in one durable transaction with its audit entry."""

from __future__ import annotations

import re
from dataclasses import asdict
from datetime import date
from typing import TYPE_CHECKING, Any

from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone
from django.utils.translation import gettext as _

from casefiles import audit
from casefiles.access import Action, Role, can, role_in
from evidence.models import EvidenceItem, Identification
from people.models import CaseRole, Person
from people.protection import reveal_refusal
from people.services import open_or_audit, set_victim_status_within

from ..models import Antemortem, Candidate, Profile, Session, Status, StatusChange

if TYPE_CHECKING:
    from django.contrib.auth.models import User as Account

    from casefiles.models import Case

# A session holds every photo its filters match, paged on its page (decision 0018); past
# this many, preparing one is refused with the count, so that the filters are narrowed:
# never a silent cut.
MAX_CANDIDATES = 10_000


def profile_refusal(actor: Any, case: Case, person: Person) -> str | None:
    """Why ``actor`` may not see or change ``person``'s antemortem profile (else None):
    the rule of revealing the person's identity."""
    if not can(actor, Action.REVEAL_IDENTITY, case):
        return _("Your role does not allow seeing a missing person's profile.")
    return reveal_refusal(actor, person, case)


def lead_refusal(actor: Any, case: Case) -> str | None:
    if role_in(actor, case) != Role.LEAD:
        return _("Only the case lead prepares and runs a family identification session.")
    return None


def _in_case(person: Person, case: Case) -> bool:
    return CaseRole.objects.filter(case=case, person=person).exists()


def save_profile(
    *,
    actor: Account,
    case: Case,
    person: Person,
    values: Antemortem,
    last_seen_on: date | None = None,
    last_seen_place: Any = None,
    facility: Any = None,
) -> Profile:
    """Record or change ``person``'s antemortem profile; the audit entry names the
    fields changed, never their values."""
    if not _in_case(person, case):
        raise PermissionDenied("person has no role in this case")
    if refusal := profile_refusal(actor, case, person):
        raise PermissionDenied(refusal)
    with transaction.atomic(durable=True):
        profile = Profile.objects.select_for_update().filter(person=person).first()
        new = profile is None
        if profile is None:
            profile = Profile(case=case, person=person, created_by=actor)
            changed = [k for k, v in asdict(values).items() if v]
        else:
            before = profile.open()
            changed = [k for k, v in asdict(values).items() if getattr(before, k) != v]
        for name, value in (
            ("last_seen_on", last_seen_on),
            ("last_seen_place", last_seen_place),
            ("facility", facility),
        ):
            if getattr(profile, name) != value:
                changed.append(name)
                setattr(profile, name, value)
        profile.seal(values)
        profile.save()
        opened: list[int] = []
        if new:
            # The history opens with the person's status; a victim without one is missing.
            if person.victim_status:
                opened.append(
                    StatusChange.objects.create(
                        profile=profile, old="", new=person.victim_status, changed_by=actor
                    ).pk
                )
            else:  # kept by the hook (keep_status_change), as any change
                set_victim_status_within(
                    actor=actor, case=case, person=person, status=Status.MISSING
                )
        audit.record(
            actor,
            "missing.profile_save",
            target=person,
            case=case,
            binds={StatusChange: opened, Profile: [profile.pk]},
            new=new,
            fields=changed,
        )
    return profile


def reveal_profile(*, actor: Account, case: Case, profile: Profile) -> Antemortem:
    """Decrypt a profile for one page view; the reveal is audited before it is returned."""
    if refusal := profile_refusal(actor, case, profile.person):
        raise PermissionDenied(refusal)
    opened = open_or_audit(
        profile.open,
        actor=actor,
        action="missing.profile_reveal_failed",
        target=profile.person,
        case=case,
    )
    with transaction.atomic(durable=True):
        audit.record(actor, "missing.profile_reveal", target=profile.person, case=case)
    return opened


def keep_status_change(
    actor: Account, person: Person, old: str, new: str, reason: str
) -> dict[Any, list[int]] | None:
    """The people hook of every change of a victim's status (``people.hooks``), inside
    its transaction: a person with a profile keeps the change in its history, a row the
    change's audit entry binds. A profile's status cannot be emptied."""
    profile = Profile.objects.filter(person=person).only("pk").first()
    if profile is None:
        return None
    if not new:
        raise ValidationError(
            {"victim_status": _("A missing person's profile needs a status; choose one.")}
        )
    kept = StatusChange.objects.create(
        profile=profile, old=old, new=new, reason=reason[:500], changed_by=actor
    )
    return {StatusChange: [kept.pk]}


def change_status(*, actor: Account, case: Case, profile: Profile, status: str, reason: str):
    """Change the victim's status from their profile: the person's status, through people
    (whose hook keeps the change in the profile's history)."""
    if refusal := profile_refusal(actor, case, profile.person):
        raise PermissionDenied(refusal)
    if status not in Status.values:
        raise ValidationError({"status": _("Choose a status from the list.")})
    with transaction.atomic(durable=True):
        set_victim_status_within(
            actor=actor, case=case, person=profile.person, status=status, reason=reason
        )


def body_number(item: EvidenceItem) -> int | None:
    """The body or detainee number a photo carries, as far as the case stores it: the
    last run of digits of its original filename (no field holds it; decision 0018)."""
    found = re.findall(r"[0-9]+", item.original_filename)
    return int(found[-1]) if found else None


def _case_photos(case: Case) -> QuerySet[EvidenceItem]:
    return EvidenceItem.objects.filter(
        case=case, kind=EvidenceItem.Kind.PHOTO, testimony__isnull=True
    )


def candidates_for(
    case: Case,
    *,
    facility: Any = None,
    number_from: int | None = None,
    number_to: int | None = None,
    taken_from: date | None = None,
    taken_to: date | None = None,
    limit: int | None = None,
) -> list[EvidenceItem]:
    """The case's photos that match the filters, in filename order: all of them, or the
    first ``limit`` + 1 (so that a caller knows there are more than ``limit``)."""
    items = _case_photos(case).only("pk", "reference", "original_filename")
    if facility is not None:
        items = items.filter(location__facility=facility)
    if taken_from is not None:
        items = items.filter(provenance__taken_date__gte=taken_from)
    if taken_to is not None:
        items = items.filter(provenance__taken_date__lte=taken_to)
    found = []
    for item in items.order_by("original_filename", "pk").iterator(chunk_size=2000):
        number = body_number(item)
        if number_from is not None and (number is None or number < number_from):
            continue
        if number_to is not None and (number is None or number > number_to):
            continue
        found.append(item)
        if limit is not None and len(found) > limit:
            break
    return found


def prepare_session(
    *, actor: Account, case: Case, profile: Profile, family_member: Person, **filters: Any
) -> Session:
    """The case lead prepares the candidate photos for a victim's family."""
    if refusal := lead_refusal(actor, case):
        raise PermissionDenied(refusal)
    if profile.case_id != case.pk:
        raise PermissionDenied("profile of another case")
    if family_member.pk == profile.person_id or not _in_case(family_member, case):
        raise ValidationError({"family_member": _("Choose a person of this case.")})
    items = candidates_for(case, **filters, limit=MAX_CANDIDATES)
    if not items:
        raise ValidationError(_("No photo of the case matches these filters."))
    if len(items) > MAX_CANDIDATES:
        raise ValidationError(
            _(
                "More than %(limit)s photos of the case match these filters: a session "
                "holds at most %(limit)s. Narrow the filters (facility, body numbers or "
                "dates)."
            )
            % {"limit": MAX_CANDIDATES}
        )
    with transaction.atomic(durable=True):
        # How many photos the filters left out, counted with the candidates they matched,
        # so that the session page says so without counting again.
        left_out = _case_photos(case).count() - len(items)
        session = Session.objects.create(
            case=case,
            profile=profile,
            family_member=family_member,
            prepared_by=actor,
            matched=len(items),
            left_out=left_out,
            **filters,
        )
        Candidate.objects.bulk_create(
            (Candidate(session=session, item=item, order=n) for n, item in enumerate(items, 1)),
            batch_size=1000,
        )
        audit.record(
            actor,
            "missing.session_prepare",
            target=profile.person,
            case=case,
            session=session.pk,
            candidates=[i.reference for i in items],
            left_out=left_out,
        )
    return session


def show_candidate(*, actor: Account, case: Case, candidate: Candidate) -> None:
    """The family member chose to look at one photo: one audit entry per photo shown."""
    if refusal := lead_refusal(actor, case):
        raise PermissionDenied(refusal)
    with transaction.atomic(durable=True):
        if candidate.shown_at is None:
            candidate.shown_at = timezone.now()
            candidate.save(update_fields=["shown_at"])
        audit.record(
            actor,
            "missing.photo_shown",
            target=candidate.item,
            case=case,
            session=candidate.session_id,
            person=str(candidate.session.profile.person),
        )


def identify(
    *,
    actor: Account,
    case: Case,
    candidate: Candidate,
    confidence: str,
    consent: bool,
    present: str,
    status: str,
    notes: str = "",
) -> Identification:
    """The family member identifies the victim in a photo they were shown: recorded as
    an identification of the item (the witness is the family member), and the victim's
    status follows."""
    if refusal := lead_refusal(actor, case):
        raise PermissionDenied(refusal)
    if candidate.shown_at is None:
        raise ValidationError(_("The family member has not looked at this photo."))
    if not consent:
        raise ValidationError({"consent": _("The family member's consent is needed.")})
    if confidence not in Identification.Confidence.values:
        raise ValidationError({"confidence": _("Choose a confidence from the list.")})
    if status not in (Status.IDENTIFIED, Status.DECEASED):
        raise ValidationError({"status": _("Choose identified or deceased.")})
    if not present.strip():
        raise ValidationError({"present": _("Say who was present.")})
    session = candidate.session
    with transaction.atomic(durable=True):
        identification = Identification.objects.create(
            case=case,
            item=candidate.item,
            witness=session.family_member,
            identified=session.profile.person,
            confidence=confidence,
            method=Identification.Method.PHOTO,
            identified_on=timezone.localdate(),
            notes=notes,
            recorded_by=actor,
        )
        candidate.identification = identification
        candidate.consent = True
        candidate.seal_present(present.strip()[:500])
        candidate.save(update_fields=["identification", "consent", "enc_present"])
        audit.record(
            actor,
            "missing.identified",
            target=candidate.item,
            case=case,
            session=session.pk,
            witness=str(session.family_member),
            identified=str(session.profile.person),
            confidence=confidence,
        )
        set_victim_status_within(
            actor=actor,
            case=case,
            person=session.profile.person,
            status=status,
            reason=_("Identified in a family session."),
        )
    return identification
