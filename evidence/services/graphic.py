"""Graphic content: items marked graphic, or no longer, a selection at a time.

What a user is then shown of them (blurred until revealed) is ``evidence.graphic``'s;
the blurred thumbnails themselves are derivatives (``derivatives.blurred_thumbnail``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.db.models import QuerySet

from casefiles import audit
from casefiles.access import Action, can
from people.protection import withheld_testimonies

from ..models import EvidenceItem, IntakeBatch

if TYPE_CHECKING:
    from django.contrib.auth.models import User as Account

    from casefiles.models import Case


def may_mark_graphic(user: Account, case: Case) -> bool:
    """Who judges what an item shows: those who take evidence in, and those who review it."""
    return can(user, Action.ADD_EVIDENCE, case) or can(user, Action.REVIEW, case)


def set_graphic(
    *,
    actor: Account,
    case: Case,
    items: QuerySet[EvidenceItem] | Iterable[EvidenceItem],
    graphic: bool = True,
) -> list[str]:
    """Mark ``items`` of ``case`` graphic (or, ``graphic=False``, no longer), all at once:
    one item from its page, or a whole selection. Returns the references changed, in
    order (those already so are left alone); one audit entry names every one of them.

    Refused when the actor may not judge the case's evidence, when an item belongs to
    another case, or when an item is withheld from the actor (attached to a statement they
    may not read: they have not seen it)."""
    if not may_mark_graphic(actor, case):
        raise PermissionDenied(Action.ADD_EVIDENCE)
    if not isinstance(items, QuerySet):
        items = list(items)
    chosen = _chosen(items)
    # One item from its page: the entry is that item's ("Who saw this item" lists it).
    one = items[0] if isinstance(items, list) and len(items) == 1 else None
    with transaction.atomic(durable=True):
        refs = _set(actor, case, chosen, graphic)
        if refs:
            audit.record(
                actor,
                "evidence.graphic_mark" if graphic else "evidence.graphic_unmark",
                target=one,
                case=case,
                items=refs,
            )
    return refs


def mark_batch_graphic(*, actor: Account, batch: IntakeBatch) -> list[str]:
    """Mark an intake batch graphic: what it takes in from now on, and every item it has
    taken in already (``ingest --graphic`` resuming a batch opened without it)."""
    if not may_mark_graphic(actor, batch.case):
        raise PermissionDenied(Action.ADD_EVIDENCE)
    with transaction.atomic(durable=True):
        IntakeBatch.objects.filter(pk=batch.pk).update(graphic=True)
        refs = _set(actor, batch.case, EvidenceItem.objects.filter(batch=batch), True)
        audit.record(actor, "evidence.graphic_mark", target=batch, case=batch.case, items=refs)
    batch.graphic = True
    return refs


def _chosen(items: QuerySet[EvidenceItem] | list[EvidenceItem]) -> QuerySet[EvidenceItem]:
    """The selection as a query of its own (a queryset stays a subquery: a selection of
    tens of thousands of items is never read into memory to be named)."""
    if isinstance(items, QuerySet):
        return EvidenceItem.objects.filter(pk__in=items.order_by().values("pk"))
    return EvidenceItem.objects.filter(pk__in=[item.pk for item in items])


def _set(actor: Account, case: Case, chosen: QuerySet[EvidenceItem], graphic: bool) -> list[str]:
    """Inside the caller's transaction: the change, and the references it changed."""
    if chosen.exclude(case=case).exists():
        raise ValueError("Every item must belong to the case.")
    if chosen.filter(testimony_id__in=withheld_testimonies(actor, case)).exists():
        raise PermissionDenied("an item of the selection is withheld from you")
    changing = chosen.exclude(is_graphic=graphic)
    refs = list(
        changing.select_for_update().order_by("reference").values_list("reference", flat=True)
    )
    if refs:
        changing.update(is_graphic=graphic)
    return refs
