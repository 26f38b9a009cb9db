"""Review decisions on evidence items and testimony, by the table of ``legal/review.py``."""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from django.core.exceptions import PermissionDenied, ValidationError
from django.db import models, transaction
from django.utils.translation import gettext as _

from casefiles import audit
from casefiles.access import can, is_system_admin
from casefiles.models import Case
from casefiles.reviewing import ReviewStatus
from casefiles.services import one_person_refusal
from evidence.models import EvidenceItem
from people.models import Testimony
from people.protection import statement_refusal

from ..models import ReviewDecision
from ..review import TRANSITIONS, Step, actions_for
from .common import Reviewed

if TYPE_CHECKING:
    from django.contrib.auth.models import User as Account


def kind_of(record: Reviewed) -> str:
    return "item" if isinstance(record, EvidenceItem) else "testimony"


def status_of(record: Reviewed) -> str:
    return record.review_status if isinstance(record, EvidenceItem) else record.status


def reviewed_hash(record: Reviewed) -> str:
    """What a decision on ``record`` is about: its original's SHA-256, or its statement's
    latest version's."""
    if isinstance(record, EvidenceItem):
        return record.original.sha256
    head = record.versions.order_by("-number").first()
    return head.sha256 if head else ""


def _case(record: Reviewed) -> Case:
    return record.case


class Refused(NamedTuple):
    message: str
    forbidden: bool  # who asks may never take it (PermissionDenied), or not in this state


def refusal(
    actor: Account, record: Reviewed, target: str, *, admin: bool | None = None
) -> Refused | None:
    """Why ``actor`` may not move ``record`` to ``target`` now, or None if they may
    (``admin``: whether the actor is a system admin, when the caller knows already)."""
    source = status_of(record)
    move = TRANSITIONS.get((source, target))
    if move is None or not move.offered:
        message = _("A record that is %(from)s cannot be made %(to)s.") % {
            "from": ReviewStatus(source).label.lower(),
            "to": ReviewStatus(target).label.lower(),
        }
        return Refused(message, forbidden=False)
    if is_system_admin(actor) if admin is None else admin:
        return Refused(_("A system admin does not review case content."), forbidden=True)
    if not any(can(actor, action, _case(record)) for action in actions_for(kind_of(record), move)):
        return Refused(_("Your role in this case does not allow this step."), forbidden=True)
    if isinstance(record, Testimony) and statement_refusal(actor, record.witness, record.case):
        message = _("You may not read this statement, so you may not review it.")
        return Refused(message, forbidden=True)
    if move.four_eyes and _had_a_hand_in(actor, record):
        message = _(
            "Who submitted or last changed a record cannot approve it: a second person does."
        )
        return Refused(message, forbidden=False)
    return None


def refusal_of_choice(source: str, target: str) -> str:
    """What to say when the step asked for is not one the table has from ``source``."""
    if target in ReviewStatus.values:
        return _("A record that is %(from)s cannot be made %(to)s.") % {
            "from": ReviewStatus(source).label.lower(),
            "to": ReviewStatus(target).label.lower(),
        }
    return _("Choose one of the decisions offered.")


def allowed_targets(actor: Account, record: Reviewed, *, admin: bool | None = None) -> list[str]:
    """The statuses ``actor`` may move ``record`` to now, in the table's order
    (``admin``: whether the actor is a system admin, when the caller knows already)."""
    source = status_of(record)
    moves = [t for (src, t), move in TRANSITIONS.items() if src == source and move.offered]
    if admin is None:
        admin = is_system_admin(actor) if moves else False
    return [t for t in moves if refusal(actor, record, t, admin=admin) is None]


def _had_a_hand_in(actor: Account, record: Reviewed) -> bool:
    if isinstance(record, Testimony):
        return record.submitted_by_id == actor.pk or record.versions.filter(author=actor).exists()
    if record.changed_by_id == actor.pk:
        return True
    submitted = (
        ReviewDecision.objects.filter(item=record, to_status=ReviewStatus.SUBMITTED)
        .order_by("-pk")
        .values_list("actor_id", flat=True)
        .first()
    )
    return submitted == actor.pk


def _hands(record: Reviewed) -> set[int]:
    """The accounts that submitted or last changed ``record``: who approves it must be a
    second person to each of them (``one_person_refusal``, decision 0022)."""
    if isinstance(record, Testimony):
        authors = set(record.versions.values_list("author_id", flat=True))
        return {pk for pk in (record.submitted_by_id, *authors) if pk is not None}
    submitted = (
        ReviewDecision.objects.filter(item=record, to_status=ReviewStatus.SUBMITTED)
        .order_by("-pk")
        .values_list("actor_id", flat=True)
        .first()
    )
    return {pk for pk in (record.changed_by_id, submitted) if pk is not None}


def _locked(record: Reviewed) -> Reviewed:
    locked: Reviewed
    if isinstance(record, EvidenceItem):
        items = EvidenceItem.objects.select_for_update().select_related("original")
        locked = items.get(pk=record.pk)
    else:
        testimonies = Testimony.objects.select_for_update().select_related("witness")
        locked = testimonies.get(pk=record.pk)
    locked.case = record.case  # the one carrying the viewer's role
    return locked


def decide(
    *, actor: Account, record: Reviewed, to_status: str, comment: str = ""
) -> ReviewDecision:
    """Take one step of the table on an item or a testimony, with its decision row and
    audit entry in one transaction. Refused with the reason in words otherwise."""
    comment = comment.strip()
    with transaction.atomic(durable=True):
        locked = _locked(record)
        if refused := refusal(actor, locked, to_status):
            if refused.forbidden:
                raise PermissionDenied(refused.message)
            raise ValidationError(refused.message)
        move = TRANSITIONS[(status_of(locked), to_status)]
        if move.four_eyes:
            for hand in sorted(_hands(locked)):
                if one_person := one_person_refusal(actor, hand):
                    raise ValidationError(one_person)
        if move.needs_comment and not comment:
            raise ValidationError({"comment": _("Say why: a comment is required for this step.")})
        decision = _step_within(actor, locked, move, to_status, comment, reviewed_hash(locked))
    _copy_status(record, locked)
    return decision


def reopen_within(actor: Account, record: models.Model, sha256: str) -> None:
    """An approved record's content changed: back to ``submitted``, recorded as a
    decision by whoever changed it (``casefiles.reviewing`` calls this)."""
    if not isinstance(record, EvidenceItem | Testimony):
        return
    if status_of(record) != ReviewStatus.APPROVED:
        return
    move = TRANSITIONS[(ReviewStatus.APPROVED, ReviewStatus.SUBMITTED)]
    comment = "changed after approval"  # stored as is: the history reads the same for all
    _step_within(actor, record, move, ReviewStatus.SUBMITTED, comment, sha256)


def _step_within(
    actor: Account, record: Reviewed, move: Step, to_status: str, comment: str, sha256: str
) -> ReviewDecision:
    source = status_of(record)
    if isinstance(record, EvidenceItem):
        decision = ReviewDecision.objects.create(
            item=record,
            from_status=source,
            to_status=to_status,
            actor=actor,
            comment=comment,
            sha256=sha256,
        )
        record.review_status = to_status
        record.save(update_fields=["review_status"])
    else:
        decision = ReviewDecision.objects.create(
            testimony=record,
            from_status=source,
            to_status=to_status,
            actor=actor,
            comment=comment,
            sha256=sha256,
        )
        record.status = to_status
        fields = ["status"]
        if move.verb == "submit":
            record.submitted_by = actor
            fields.append("submitted_by")
        record.save(update_fields=fields)
    audit.record(
        actor,
        f"review.{move.verb}",
        target=record,
        case=record.case,
        binds={ReviewDecision: [decision.pk]},
        from_status=source,
        to_status=to_status,
        comment=comment,
        sha256=sha256,
    )
    return decision


def _copy_status(record: Reviewed, locked: Reviewed) -> None:
    if isinstance(record, EvidenceItem) and isinstance(locked, EvidenceItem):
        record.review_status = locked.review_status
    elif isinstance(record, Testimony) and isinstance(locked, Testimony):
        record.status, record.submitted_by_id = locked.status, locked.submitted_by_id
