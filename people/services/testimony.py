"""Testimony: statements, their versions, the review between investigator and lead,
and the diff between two versions."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.db.models import Max
from django.utils.translation import gettext as _

from casefiles import audit
from casefiles.access import Action, active_membership_q, can
from casefiles.models import Case

from .. import linediff
from ..models import (
    CaseRole,
    Person,
    ReviewDecision,
    Testimony,
    TestimonyVersion,
    text_sha256,
)
from ..protection import (
    forget_interviewers,
    statement_refusal,
    testimony_refusal,
)
from .common import _require

if TYPE_CHECKING:
    from django.contrib.auth.models import User as Account

# Stored as is, whatever the interviewer's language: the history reads the same for all.
FIRST_VERSION = "First version"


def create_testimony(
    *,
    actor: Account,
    case: Case,
    witness: Person,
    text: str,
    taken_at: datetime,
    language: str,
    mode: str,
    interviewers: Sequence[Any] = (),
    interpreter: str = "",
    place: str = "",
    remote: bool = False,
) -> Testimony:
    """Log an interview as a draft testimony with its first version.

    The interviewers it names may then reveal a High-protection witness's identity: so
    for a protected witness only someone who may reveal it already logs one
    (``testimony_refusal``), and every interviewer must be a member of the case now.
    The entry names the interviewers.
    """
    _require(actor, Action.ADD_TESTIMONY, case)
    if not CaseRole.objects.filter(person=witness, case=case).exists():
        raise ValidationError(_("The witness must have a role in this case."))
    if refusal := testimony_refusal(actor, witness, case):
        raise PermissionDenied(refusal)
    interviewers = list(interviewers)
    members = set(case.memberships.filter(active_membership_q()).values_list("user_id", flat=True))
    if any(u.pk not in members for u in interviewers):
        raise ValidationError({"interviewers": _("Interviewers must be members of the case.")})
    if not text.strip():
        raise ValidationError({"text": _("The statement is empty.")})
    testimony = Testimony(
        case=case,
        witness=witness,
        taken_at=taken_at,
        language=language,
        mode=mode,
        interpreter=interpreter,
        place=place,
        remote=remote,
        created_by=actor,
    )
    testimony.full_clean()
    with transaction.atomic(durable=True):
        testimony.save()
        testimony.interviewers.set(interviewers)
        forget_interviewers(witness)  # who may now reveal the witness has changed
        version = TestimonyVersion(
            testimony=testimony,
            number=1,
            text=text,
            reason=FIRST_VERSION,
            sha256=text_sha256(text),
            author=actor,
        )
        version.save()
        audit.record(
            actor,
            "testimony.create",
            target=testimony,
            case=case,
            binds={TestimonyVersion: [version.pk]},
            witness=witness.code,
            interviewers=sorted(u.get_username() for u in interviewers),
            sha256=version.sha256,
        )
    return testimony


def revise_testimony(
    *, actor: Account, testimony: Testimony, text: str, reason: str
) -> TestimonyVersion:
    """Add a version to a draft or returned testimony; earlier versions stay as they were.

    Only by who may read the statement: a new version shows what changed."""
    _require(actor, Action.ADD_TESTIMONY, testimony.case)
    if refusal := statement_refusal(actor, testimony.witness, testimony.case):
        raise PermissionDenied(refusal)
    if not reason.strip():
        raise ValidationError({"reason": _("Say why the statement changes.")})
    if not text.strip():
        raise ValidationError({"text": _("The statement is empty.")})
    with transaction.atomic(durable=True):
        locked = Testimony.objects.select_for_update().get(pk=testimony.pk)
        if not locked.editable:
            raise ValidationError(_("Only a draft or returned testimony can be changed."))
        last = locked.versions.aggregate(n=Max("number"))["n"] or 0
        version = TestimonyVersion(
            testimony=locked,
            number=last + 1,
            text=text,
            reason=reason.strip(),
            sha256=text_sha256(text),
            author=actor,
        )
        version.save()
        audit.record(
            actor,
            "testimony.revise",
            target=locked,
            case=locked.case,
            binds={TestimonyVersion: [version.pk]},
            version=version.number,
            sha256=version.sha256,
            reason=version.reason,
        )
    return version


# Which transitions exist, and the action each needs.
TRANSITIONS: dict[tuple[str, str], str] = {
    (Testimony.Status.DRAFT, Testimony.Status.SUBMITTED): Action.ADD_TESTIMONY,
    (Testimony.Status.RETURNED, Testimony.Status.SUBMITTED): Action.ADD_TESTIMONY,
    (Testimony.Status.SUBMITTED, Testimony.Status.APPROVED): Action.APPROVE,
    (Testimony.Status.SUBMITTED, Testimony.Status.RETURNED): Action.APPROVE,
}


def allowed_transitions(actor: Account, testimony: Testimony) -> list[str]:
    """The statuses ``actor`` may move the testimony to now (four-eyes included)."""
    targets = []
    for (source, target), action in TRANSITIONS.items():
        if source != testimony.status or not can(actor, action, testimony.case):
            continue
        if target == Testimony.Status.APPROVED and _had_a_hand_in(actor, testimony):
            continue
        targets.append(target)
    return targets


def _had_a_hand_in(actor: Account, testimony: Testimony) -> bool:
    """Four eyes: whoever submitted the testimony or wrote a version of it."""
    return testimony.submitted_by_id == actor.pk or testimony.versions.filter(author=actor).exists()


def decide_testimony(
    *, actor: Account, testimony: Testimony, to_status: str, comment: str = ""
) -> ReviewDecision:
    """Move a testimony through review. The one who submitted it cannot approve it."""
    comment = comment.strip()
    with transaction.atomic(durable=True):
        locked = Testimony.objects.select_for_update().get(pk=testimony.pk)
        source = locked.status
        action = TRANSITIONS.get((source, to_status))
        if action is None:
            raise ValidationError(
                _("A %(from)s testimony cannot become %(to)s.")
                % {"from": Testimony.Status(source).label, "to": Testimony.Status(to_status).label}
            )
        _require(actor, action, locked.case)
        if to_status == Testimony.Status.APPROVED and _had_a_hand_in(actor, locked):
            raise ValidationError(
                _("Who submitted a testimony or wrote a version of it cannot approve it.")
            )
        if to_status == Testimony.Status.RETURNED and not comment:
            raise ValidationError({"comment": _("Say what needs to change.")})
        locked.status = to_status
        if to_status == Testimony.Status.SUBMITTED:
            locked.submitted_by = actor
        locked.save(update_fields=["status", "submitted_by"])
        decision = ReviewDecision.objects.create(
            testimony=locked, from_status=source, to_status=to_status, actor=actor, comment=comment
        )
        head = locked.versions.order_by("-number").first()
        audit.record(
            actor,
            f"testimony.{_VERB[to_status]}",
            target=locked,
            case=locked.case,
            binds={ReviewDecision: [decision.pk]},
            from_status=source,
            to_status=to_status,
            comment=comment,
            version=head.number if head else None,
            sha256=head.sha256 if head else "",
        )
    testimony.status, testimony.submitted_by_id = locked.status, locked.submitted_by_id
    return decision


_VERB: dict[str, str] = {
    Testimony.Status.SUBMITTED: "submit",
    Testimony.Status.APPROVED: "approve",
    Testimony.Status.RETURNED: "return",
}


def diff_versions(old: TestimonyVersion, new: TestimonyVersion) -> list[tuple[str, str | int]]:
    """A line diff for the page as (tag, line) pairs, tag one of ' ', '-', '+', with each
    long run of unchanged lines folded into one ('…', how many) pair.

    Its work grows with the statements' length, never with its square (``linediff``).
    """
    rows = linediff.diff_lines(old.text.splitlines(), new.text.splitlines())
    return linediff.with_context(rows)
