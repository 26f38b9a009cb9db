"""The reads of search: what the page and the API call, never a manager.

``search`` (``search.query``) is itself a read through the access policy: the entries of
the user's cases only, with what a statement withholds from them left out
(``people.protection.withheld_testimonies``), and its audit entry written.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from casefiles import reads as case_reads

from .query import Results, search

if TYPE_CHECKING:
    from casefiles.access import User
    from casefiles.models import Case

__all__ = ["Results", "cases_to_search", "search"]


def cases_to_search(user: User | None) -> dict[str, Case]:
    """The cases ``user`` may search, by reference, in order."""
    return case_reads.cases_by_reference(user)
