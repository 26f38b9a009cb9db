"""The reads of evidence: what pages and the API call, never a manager.

Case access (``visible_to``) is not enough for evidence: an item attached to a testimony
whose statement the reader may not read is that statement in another form, and is
withheld (``people.protection.attachment_refusal``). So:

- ``readable_by(user, case)``: the items whose content ``user`` may see; the default for
  any new page or API operation.
- ``listed_for(user, case)``: every item ``user`` may know of, each marked ``withheld``
  (``people.reads.withheld``), for lists that show a withheld item by its reference only.
- ``get_item_for_user``: one item by reference, 404 for what the user may not see;
  ``withheld_refusal`` says whether its content is kept, ``record_withheld`` writes the
  audit entry such a refused read must leave.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.db.models import OuterRef, Q, QuerySet, Subquery
from django.db.models.lookups import IsNull
from django.http import Http404
from django.shortcuts import get_object_or_404

from casefiles import audit
from casefiles.access import Action, get_case_for_user
from people import reads as people_reads
from people.protection import attachment_refusal, withheld_testimonies

from .models import (
    Derivative,
    EvidenceItem,
    Identification,
    IntakeBatch,
    ManifestEntry,
)

if TYPE_CHECKING:
    from casefiles.access import User
    from casefiles.models import Case


def visible_items(user: User | None, case: Case | None = None) -> QuerySet:
    """Items of the cases ``user`` is a member of, withheld ones included: the start of
    ``listed_for`` and ``readable_by``, for a caller that marks or refuses them itself."""
    items = EvidenceItem.objects.visible_to(user)
    return items if case is None else items.filter(case=case)


def readable_by(user: User | None, case: Case | None = None) -> QuerySet:
    """The items whose content ``user`` may see, in ``case`` or in all their cases: case
    access and the protection rule at once."""
    return visible_items(user, case).exclude(testimony_id__in=withheld_testimonies(user, case))


def listed_for(user: User | None, case: Case | None = None) -> QuerySet:
    """Every item ``user`` may know of, each annotated ``withheld`` (shown by reference
    and kind only, never its title, metadata or pictures)."""
    return visible_items(user, case).annotate(withheld=people_reads.withheld(user, case))


def withheld(user: User | None, case: Case | None = None, field: str = "testimony_id"):
    """``people.reads.withheld``, for a list of items or of rows that point to one."""
    return people_reads.withheld(user, case, field)


def has_thumbnail() -> IsNull:
    """Whether an item's original has a thumbnail, for a list of items: a scalar subquery
    (``LIMIT 1``) run for the rows of the page alone. As ``EXISTS``, PostgreSQL hashed
    every thumbnail of every case first: 18 ms at 100,000 items, on each page."""
    first = Derivative.objects.filter(original=OuterRef("original"), kind="thumbnail")
    return IsNull(Subquery(first.values("pk")[:1]), False)


def get_item_for_user(
    user: User | None, ref: str, item_ref: str, action: str = Action.VIEW_CASE
) -> tuple[Case, EvidenceItem]:
    """The case ``ref`` and its item ``item_ref``, if ``user`` may do ``action`` there;
    404 otherwise. A withheld item is found (its page says why it is withheld): ask
    ``withheld_refusal`` before showing or serving anything of it."""
    case = get_case_for_user(user, ref, action)
    item = get_object_or_404(
        visible_items(user, case).select_related(
            "original",
            "provenance",
            "batch",
            "provenance__acquired_by",
            "source_person",
            "testimony__witness",
        ),
        reference=item_ref,
    )
    item.case = case
    if item.batch is not None and item.batch.case_id == case.pk:
        item.batch.case = case  # its link on the page needs the case: no query for it
    return case, item


def item_in_case(user: User | None, case: Case, reference: str) -> EvidenceItem | None:
    """The item ``reference`` of ``case`` ``user`` may know of, or None."""
    return visible_items(user, case).filter(reference=reference).first()


def withheld_refusal(user: User | None, item: EvidenceItem) -> str | None:
    """Why ``item``'s content is kept from ``user`` (else None)."""
    return attachment_refusal(user, item)


def record_withheld(user: User | None, case: Case, item: EvidenceItem, asked: str) -> None:
    """The audit entry of a refused read of a withheld item: its page seen (``asked`` is
    "page") or its content asked for (a thumbnail, the original, a form...)."""
    if asked == "page":
        audit.record(user, "evidence.view", target=item, case=case, withheld=True)
    else:
        audit.record(user, "evidence.withheld", target=item, case=case, asked=asked)


def identifications_in(user: User | None, item: EvidenceItem) -> QuerySet:
    """Who was identified in this item, or in a near-identical photo of it (same group)."""
    of_item = Q(item=item)
    if item.near_group is not None:
        of_item |= Q(item__near_group=item.near_group)
    return (
        Identification.objects.visible_to(user)
        .filter(of_item, case=item.case)
        .select_related("witness", "identified", "item")
        .order_by("identified_on", "pk")
    )


def listed_entry(item: EvidenceItem) -> ManifestEntry | None:
    """What the custodian's own list said of this (visible) item's file, if one came."""
    if item.batch is None or item.batch.custodian_manifest_id is None:
        return None
    return ManifestEntry.objects.filter(item=item, batch=item.batch).first()


def derivative_kinds(item: EvidenceItem) -> set[str]:
    """The kinds of derivative made of this (visible) item's original."""
    return set(Derivative.objects.filter(original=item.original_id).values_list("kind", flat=True))


def derivative_of(item: EvidenceItem, kind: str) -> Derivative | None:
    """The derivative of ``kind`` of this (visible, not withheld) item's original."""
    return Derivative.objects.filter(original=item.original_id, kind=kind).first()


def get_batch_for_user(user: User | None, case: Case, pk: int) -> IntakeBatch:
    """The intake batch ``pk`` of ``case``; 404 for one ``user`` may not see."""
    return get_object_or_404(IntakeBatch.objects.visible_to(user), case=case, pk=pk)


def no_items() -> QuerySet:
    """No item: the queryset a form is bound to when it lists nothing."""
    return EvidenceItem.objects.none()


def get_readable_item(user: User | None, case: Case, reference: str, *related: str):
    """The item ``reference`` of ``case`` with ``related`` read along, if ``user`` may
    see its content; 404 otherwise, a withheld item included (for pages that are its
    content: a report, a redacted copy)."""
    items = visible_items(user, case).select_related("testimony__witness", *related)
    item = get_object_or_404(items, reference=reference)
    item.case = case
    if withheld_refusal(user, item):
        raise Http404
    return item
