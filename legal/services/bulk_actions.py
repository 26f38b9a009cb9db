"""What each bulk action does to a chunk of items, who may take it, and which items it
leaves alone and why.

An action's *skip reason* is one SQL expression over the item (``""``: it changes), so
the confirmation counts what will change and what will be skipped in one query, and a
chunk reads its items and their reasons in one query too. A chunk's writes are a few
statements whatever its size: decision, link or tag rows in one multi-row ``INSERT``
(``casefiles.bulk.insert_rows``, ``bulk_create`` without building a model instance per
row), one ``UPDATE`` of the items; never a query per item.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.db.models import (
    Case,
    CharField,
    Exists,
    OuterRef,
    Q,
    Value,
    When,
)
from django.db.models.expressions import Expression
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from casefiles.access import Action, can, is_system_admin
from casefiles.bulk import insert_rows
from casefiles.models import Case as CaseFile
from casefiles.reviewing import ReviewStatus
from evidence.models import EvidenceItem, Tag
from people import reads as people_reads

from ..models import ElementLink, LegalElement, ReviewAssignment, ReviewDecision, Stance
from ..review import CONTRIBUTOR_ACTIONS, TRANSITIONS

if TYPE_CHECKING:
    from django.contrib.auth.models import User as Account

TaggedItem = EvidenceItem.tags.through
SUBMITTED = ReviewStatus.SUBMITTED
# The statuses the review table submits from (new, returned): the others are skipped.
SUBMITTABLE = tuple(
    source for (source, target), move in TRANSITIONS.items() if target == SUBMITTED and move.offered
)
WITHHELD = "withheld"


class Row(NamedTuple):
    """An item of a chunk as one query reads it."""

    pk: int
    reference: str
    review_status: str
    sha256: str
    reason: str  # "" when the action changes it


def reason_label(code: str) -> str:
    """Why an item was left alone, in words."""
    if code.startswith("status:"):
        status = code.partition(":")[2]
        label = ReviewStatus(status).label if status in ReviewStatus.values else status
        return _("its review status is %(status)s") % {"status": str(label).lower()}
    labels = {
        WITHHELD: _("attached to a statement you may not read"),
        "tagged": _("has this tag already"),
        "untagged": _("does not have this tag"),
        "same_sensitivity": _("has this sensitivity already"),
        "assigned": _("assigned to this reviewer already"),
        "unassigned": _("assigned to nobody"),
        "linked": _("linked to this element with this stance already"),
    }
    return labels.get(code, code)


@dataclass(frozen=True)
class Resolved:
    """An action's values, checked and looked up once per run."""

    values: dict[str, Any]  # as the job stores them (JSON)
    tag: Tag | None = None
    reviewer: Account | None = None
    element: LegalElement | None = None

    def details(self) -> dict[str, Any]:
        """What the audit entry says of the values (not the proposition: the bound link
        rows hold it)."""
        shown = {k: v for k, v in self.values.items() if k not in ("proposition", "reviewer")}
        if "reviewer" in self.values:
            shown["reviewer"] = self.reviewer.get_username() if self.reviewer else ""
        return shown


@dataclass(frozen=True)
class BulkAction:
    name: str
    label: Any  # lazy text
    verb: str  # the audit action of each chunk
    may: tuple[str, ...]  # case actions any one of which lets a member take it
    resolve: Callable[[CaseFile, dict[str, Any]], Resolved]
    reason: Callable[[Resolved], Expression]
    apply: Callable[[Account, CaseFile, Resolved, Sequence[Row]], dict[type, list[int]]]


def may_take(actor: Account, case: CaseFile, action: BulkAction) -> bool:
    """A member whose role allows the action; never a system admin (they see no case
    content, so they change none)."""
    if is_system_admin(actor):
        return False
    return any(can(actor, name, case) for name in action.may)


def reason_of(action: BulkAction, resolved: Resolved, actor: Account, case: CaseFile) -> Case:
    """The expression naming why an item is skipped ("" if it changes): withheld items
    first, then the action's own reason."""
    return Case(
        When(people_reads.withheld(actor, case), then=Value(WITHHELD)),
        default=action.reason(resolved),
        output_field=CharField(),
    )


# -- values --------------------------------------------------------------------------
def _text(values: dict[str, Any], name: str, limit: int) -> str:
    value = str(values.get(name) or "").strip()
    if not value or "\x00" in value:
        raise ValidationError({name: _("This field is required.")})
    if len(value) > limit:
        raise ValidationError({name: _("At most %(n)s characters.") % {"n": limit}})
    return value


def _tag(case: CaseFile, values: dict[str, Any]) -> Resolved:
    name = _text(values, "tag", 60)
    return Resolved({"tag": name}, tag=Tag.objects.filter(case=case, name=name).first())


def _sensitivity(case: CaseFile, values: dict[str, Any]) -> Resolved:
    value = values.get("sensitivity")
    if value not in CaseFile.Sensitivity.values:
        raise ValidationError({"sensitivity": _("Choose a sensitivity.")})
    return Resolved({"sensitivity": value})


def _reviewer(case: CaseFile, values: dict[str, Any]) -> Resolved:
    """A member of the case who may review, or nobody (the assignment is taken off)."""
    pk = values.get("reviewer")
    if pk in (None, ""):
        return Resolved({"reviewer": None})
    reviewer = get_user_model().objects.filter(pk=pk).first() if str(pk).isdigit() else None
    if reviewer is None or is_system_admin(reviewer) or not can(reviewer, Action.REVIEW, case):
        raise ValidationError({"reviewer": _("Choose a member of this case who may review.")})
    return Resolved({"reviewer": reviewer.pk}, reviewer=reviewer)


def _link(case: CaseFile, values: dict[str, Any]) -> Resolved:
    code = str(values.get("element") or "")
    element = LegalElement.objects.filter(
        code=code, retired_at__isnull=True, crime__retired_at__isnull=True
    ).first()
    if element is None:
        raise ValidationError({"element": _("Choose a current legal element.")})
    stance = values.get("stance")
    if stance not in Stance.values:
        raise ValidationError({"stance": _("Choose supports, contradicts or context.")})
    proposition = _text(values, "proposition", 5000)
    resolved = {"element": code, "stance": stance, "proposition": proposition}
    return Resolved(resolved, element=element)


def _none(case: CaseFile, values: dict[str, Any]) -> Resolved:
    return Resolved({})


# -- reasons -------------------------------------------------------------------------
def _has_tag(resolved: Resolved) -> Exists:
    return Exists(TaggedItem.objects.filter(evidenceitem_id=OuterRef("pk"), tag=resolved.tag))


def _tag_add_reason(resolved: Resolved) -> Expression:
    if resolved.tag is None:
        return Value("")  # a new tag: no item has it yet
    return Case(When(_has_tag(resolved), then=Value("tagged")), default=Value(""))


def _tag_remove_reason(resolved: Resolved) -> Expression:
    if resolved.tag is None:
        return Value("untagged")
    return Case(When(_has_tag(resolved), then=Value("")), default=Value("untagged"))


def _sensitivity_reason(resolved: Resolved) -> Expression:
    same = Q(sensitivity=resolved.values["sensitivity"])
    return Case(When(same, then=Value("same_sensitivity")), default=Value(""))


def _submit_reason(resolved: Resolved) -> Expression:
    others = [s for s in ReviewStatus.values if s not in SUBMITTABLE]
    whens = [When(review_status=s, then=Value(f"status:{s}")) for s in others]
    return Case(*whens, default=Value(""))


def _assign_reason(resolved: Resolved) -> Expression:
    if resolved.reviewer is None:
        held = Exists(ReviewAssignment.objects.filter(item=OuterRef("pk")))
        return Case(When(held, then=Value("")), default=Value("unassigned"))
    same = ReviewAssignment.objects.filter(item=OuterRef("pk"), reviewer=resolved.reviewer)
    return Case(When(Exists(same), then=Value("assigned")), default=Value(""))


def _link_reason(resolved: Resolved) -> Expression:
    same = ElementLink.objects.filter(
        item=OuterRef("pk"),
        element=resolved.element,
        stance=resolved.values["stance"],
        withdrawal__isnull=True,
    )
    return Case(When(Exists(same), then=Value("linked")), default=Value(""))


# -- writes (inside the chunk's transaction) -----------------------------------------
def _pks(rows: Sequence[Row]) -> list[int]:
    return [row.pk for row in rows]


def _tag_add(actor: Account, case: CaseFile, r: Resolved, rows: Sequence[Row]) -> dict:
    tag, _created = Tag.objects.get_or_create(case=case, name=r.values["tag"])
    rows_in = [{"evidenceitem_id": pk, "tag_id": tag.pk} for pk in _pks(rows)]
    insert_rows(TaggedItem, rows_in, ignore_conflicts=True)
    return {}


def _tag_remove(actor: Account, case: CaseFile, r: Resolved, rows: Sequence[Row]) -> dict:
    TaggedItem.objects.filter(tag=r.tag, evidenceitem_id__in=_pks(rows)).delete()
    return {}


def _set_sensitivity(actor: Account, case: CaseFile, r: Resolved, rows: Sequence[Row]) -> dict:
    EvidenceItem.objects.filter(pk__in=_pks(rows)).update(sensitivity=r.values["sensitivity"])
    return {}


def _assign(actor: Account, case: CaseFile, r: Resolved, rows: Sequence[Row]) -> dict:
    if r.reviewer is None:
        ReviewAssignment.objects.filter(item_id__in=_pks(rows)).delete()
        return {}
    now = timezone.now()
    ReviewAssignment.objects.bulk_create(
        [
            ReviewAssignment(
                item_id=pk, case=case, reviewer=r.reviewer, assigned_by=actor, assigned_at=now
            )
            for pk in _pks(rows)
        ],
        update_conflicts=True,
        unique_fields=["item"],
        update_fields=["reviewer", "assigned_by", "assigned_at"],
    )
    return {}


def _submit(actor: Account, case: CaseFile, r: Resolved, rows: Sequence[Row]) -> dict:
    """Each item a decision (from its status to submitted, with its original's hash), as
    ``review.decide`` takes one step; the statuses in one UPDATE."""
    decisions = insert_rows(
        ReviewDecision,
        [
            {
                "item_id": row.pk,
                "from_status": row.review_status,
                "to_status": SUBMITTED,
                "actor_id": actor.pk,
                "sha256": row.sha256,
            }
            for row in rows
        ],
        returning=True,
    )
    EvidenceItem.objects.filter(pk__in=_pks(rows)).update(review_status=SUBMITTED)
    return {ReviewDecision: decisions}


def _link_all(actor: Account, case: CaseFile, r: Resolved, rows: Sequence[Row]) -> dict:
    if r.element is None:
        raise ValueError("a link names its element")
    values, element = r.values, r.element.pk
    made = insert_rows(
        ElementLink,
        [
            {
                "case_id": case.pk,
                "element_id": element,
                "item_id": row.pk,
                "stance": values["stance"],
                "proposition": values["proposition"],
                "author_id": actor.pk,
            }
            for row in rows
        ],
        returning=True,
    )
    return {ElementLink: made}


_EDIT = (Action.ADD_EVIDENCE, Action.REVIEW)
ACTIONS: dict[str, BulkAction] = {
    a.name: a
    for a in [
        BulkAction(
            "assign",
            gettext_lazy("Assign a reviewer"),
            "legal.bulk_assign",
            (Action.REVIEW,),
            _reviewer,
            _assign_reason,
            _assign,
        ),
        BulkAction(
            "tag_add",
            gettext_lazy("Add a tag"),
            "legal.bulk_tag_add",
            _EDIT,
            _tag,
            _tag_add_reason,
            _tag_add,
        ),
        BulkAction(
            "tag_remove",
            gettext_lazy("Remove a tag"),
            "legal.bulk_tag_remove",
            _EDIT,
            _tag,
            _tag_remove_reason,
            _tag_remove,
        ),
        BulkAction(
            "sensitivity",
            gettext_lazy("Set the sensitivity"),
            "legal.bulk_sensitivity",
            _EDIT,
            _sensitivity,
            _sensitivity_reason,
            _set_sensitivity,
        ),
        BulkAction(
            "submit",
            gettext_lazy("Submit for review"),
            "review.bulk_submit",
            CONTRIBUTOR_ACTIONS["item"],
            _none,
            _submit_reason,
            _submit,
        ),
        BulkAction(
            "link",
            gettext_lazy("Link to a legal element"),
            "legal.bulk_link",
            (Action.REVIEW,),
            _link,
            _link_reason,
            _link_all,
        ),
    ]
}
