"""Reads of people and testimony, always through the one access policy."""

from __future__ import annotations

from typing import TYPE_CHECKING

from casefiles import access
from casefiles.querysets import AppendOnly, CaseScopedQuerySet

if TYPE_CHECKING:
    from casefiles.access import User


class PersonQuerySet(CaseScopedQuerySet):
    def visible_to(self, user: User | None) -> PersonQuerySet:
        """People with a role in a case the user is a member of."""
        from .models import CaseRole

        roles = CaseRole.objects.filter(case__in=access.visible_case_ids(user))
        return self.filter(pk__in=roles.values("person_id"))


class TestimonyVersionQuerySet(AppendOnly, CaseScopedQuerySet):
    case_field = "testimony__case"


class AppendOnlyCaseQuerySet(AppendOnly, CaseScopedQuerySet):
    """Case-owned history rows: consents."""
