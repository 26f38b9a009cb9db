"""The reads of review and legal elements: what pages and the API call, never a manager.

Case access is ``visible_to``; the protection rule is ``people.reads.withheld``: a link or
a list that names an item attached to a statement the reader may not read marks it
``item_withheld`` / ``withheld``, and pages show such an item by its reference only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.db.models import QuerySet
from django.shortcuts import get_object_or_404

from casefiles import reads as case_reads
from casefiles.access import ROLE_ACTIONS, Action
from evidence import reads as evidence_reads
from people import reads as people_reads

from .models import Assessment, BulkJob, ElementLink, LegalElement, SavedSearch

if TYPE_CHECKING:
    from casefiles.access import User
    from casefiles.models import Case


def element_catalogue() -> QuerySet:
    """The legal elements, crime by crime, in the order of the statutes (no case data)."""
    return LegalElement.objects.select_related("crime").order_by(
        "crime__order", "crime__code", "order", "code"
    )


def element_by_code(code: str) -> LegalElement | None:
    return LegalElement.objects.select_related("crime").filter(code=code).first()


def links_in(user: User | None, case: Case) -> QuerySet:
    """The links of ``case`` to legal elements, each marked ``item_withheld`` when the
    item it links is attached to a statement ``user`` may not read."""
    return (
        ElementLink.objects.visible_to(user)
        .filter(case=case)
        .annotate(item_withheld=people_reads.withheld(user, case, "item__testimony_id"))
    )


def get_link_for_user(user: User | None, case: Case, pk: int) -> ElementLink:
    """The link ``pk`` of ``case`` with its element and record; 404 otherwise."""
    found = ElementLink.objects.visible_to(user).filter(case=case)
    link = get_object_or_404(found.select_related("element", "item", "testimony__witness"), pk=pk)
    link.case = case
    return link


def workspace_items(user: User | None, case: Case) -> QuerySet:
    """The workspace's items: each marked ``withheld`` and ``has_thumbnail``."""
    return (
        evidence_reads.listed_for(user, case)
        .select_related("assignment__reviewer")
        .annotate(has_thumbnail=evidence_reads.has_thumbnail())
    )


def item_for_step(user: User | None, case: Case, reference: str):
    """The item a review step (a panel's form) names; 404 otherwise. The step's service
    applies the protection rule to what it writes."""
    items = evidence_reads.visible_items(user, case).select_related("original")
    item = get_object_or_404(items, reference=reference)
    item.case = case
    return item


def grade_rows(item_ids: list[int]) -> QuerySet:
    """(item, assessor, reliability, credibility) of each assessment of these (shown)
    items, oldest first."""
    return (
        Assessment.objects.filter(item__in=item_ids)
        .order_by("at", "pk")
        .values_list("item_id", "assessor_id", "reliability", "credibility")
    )


def reviewers_of(case: Case) -> list[tuple[str, str]]:
    """The members who may review now: those a bulk assignment may name."""
    roles = [role for role, actions in ROLE_ACTIONS.items() if Action.REVIEW in actions]
    members = (
        case_reads.active_memberships()
        .filter(case=case, role__in=roles)
        .select_related("user")
        .order_by("user__username")
    )
    return [(str(m.user_id), m.user.get_username()) for m in members]


def saved_searches(user: User | None, case: Case) -> QuerySet:
    return SavedSearch.objects.visible_to(user).filter(case=case)


def get_saved_search(user: User | None, case: Case, pk: int) -> SavedSearch:
    return get_object_or_404(saved_searches(user, case), pk=pk)


def get_bulk_job(user: User | None, case: Case, pk: int) -> BulkJob:
    """A bulk job of ``case`` with who ran it: any member may read it, as the items."""
    found = BulkJob.objects.visible_to(user).filter(case=case).select_related("actor")
    return get_object_or_404(found, pk=pk)
