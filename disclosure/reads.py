"""The reads of disclosure's pages: packages, and an item's redacted copies. Each starts
from ``visible_to`` (case access); items come through ``evidence.reads``, which applies
the protection rule. (What goes into a package is read by the build: ``contents.py``.)"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.db.models import QuerySet
from django.shortcuts import get_object_or_404

from legal import reads as legal_reads
from people.models import Person

from .models import Package, Redaction

if TYPE_CHECKING:
    from casefiles.access import User
    from casefiles.models import Case
    from evidence.models import EvidenceItem


def saved_searches(user: User | None, case: Case) -> QuerySet:
    """The searches of the workspace a package may be requested from."""
    return legal_reads.saved_searches(user, case)


def packages_in(user: User | None, case: Case) -> QuerySet:
    return Package.objects.visible_to(user).filter(case=case)


def get_package_for_user(user: User | None, case: Case, pk: int) -> Package:
    found = packages_in(user, case).select_related(
        "requested_by", "decided_by", "search", "element"
    )
    package = get_object_or_404(found, pk=pk)
    package.case = case
    return package


def people_named(pks) -> dict[Any, Person]:
    """The people a package's preview names (its matches, read from the case's own
    records), by id: whether each may be named to the reader is ``reveal_refusal``'s."""
    return {p.pk: p for p in Person.objects.filter(pk__in=pks)}


def redactions_of(item: EvidenceItem) -> QuerySet:
    """The redacted copies of an item the caller found readable (``get_readable_item``)."""
    return Redaction.objects.filter(item=item)
