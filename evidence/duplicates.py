"""Which earlier item a duplicate repeats: the first item of its own case holding the same
bytes, as the reader may see it.

An item is a duplicate only when its case already held its bytes (decision 0002): the
earlier item is always of the same case, and an item of another case is never named,
whoever reads. Each read goes through ``visible_to``; an earlier item the reader may
not see is said to exist (the case's own duplicate count says so) without its reference.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.db.models import OuterRef, QuerySet, Subquery

from .models import EvidenceItem, IntakeBatch

if TYPE_CHECKING:
    from django.contrib.auth.models import AnonymousUser
    from django.contrib.auth.models import User as Account

LISTED = 200  # duplicates a batch's page lists


def _earlier(user: Account | AnonymousUser | None) -> QuerySet[EvidenceItem]:
    """The earlier items of the outer item's case holding its bytes, first first."""
    return (
        EvidenceItem.objects.visible_to(user)
        .filter(case=OuterRef("case"), original=OuterRef("original"), pk__lt=OuterRef("pk"))
        .order_by("pk")
    )


def with_earlier(
    items: QuerySet[EvidenceItem], user: Account | AnonymousUser | None
) -> QuerySet[EvidenceItem]:
    """``items``, each with ``same_as`` and ``same_as_path``: the reference and path of the
    first earlier item of its case with the same bytes that ``user`` may see (None if
    none): subqueries of the one query that lists them."""
    earlier = _earlier(user)
    return items.annotate(
        same_as=Subquery(earlier.values("reference")[:1]),
        same_as_path=Subquery(earlier.values("original_path")[:1]),
    )


def duplicates_in(
    batch: IntakeBatch, user: Account | AnonymousUser | None, limit: int | None = None
) -> list[dict[str, Any]]:
    """The batch's duplicates in the order taken in (reference, path) and the earlier
    item each repeats (``same_as``, ``same_as_path``): one query."""
    rows = with_earlier(
        EvidenceItem.objects.visible_to(user).filter(batch=batch, is_duplicate=True), user
    ).order_by("pk")
    fields = ("reference", "original_path", "same_as", "same_as_path")
    listed = rows.values(*fields)
    return list(listed[:limit] if limit is not None else listed)


def earlier_item(item: EvidenceItem, user: Account | AnonymousUser | None) -> str | None:
    """The reference of the first earlier item of ``item``'s case with its bytes that
    ``user`` may see; None if none (or ``item`` is no duplicate: no query then)."""
    if not item.is_duplicate:
        return None
    return (
        EvidenceItem.objects.visible_to(user)
        .filter(case=item.case_id, original=item.original_id, pk__lt=item.pk)
        .order_by("pk")
        .values_list("reference", flat=True)
        .first()
    )
