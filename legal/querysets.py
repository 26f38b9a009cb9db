from __future__ import annotations

from typing import TYPE_CHECKING, Self

from django.db import models
from django.db.models import Q

from casefiles import access
from casefiles.querysets import AppendOnly, CaseScopedQuerySet

if TYPE_CHECKING:
    from casefiles.access import User


class DecisionQuerySet(AppendOnly, models.QuerySet):
    """Review decisions, through the item's or the testimony's case."""

    def visible_to(self, user: User | None) -> Self:
        cases = access.visible_case_ids(user)
        return self.filter(Q(item__case__in=cases) | Q(testimony__case__in=cases))


class CaseOwnedQuerySet(AppendOnly, CaseScopedQuerySet):
    """Links and assessments: rows of one case, never changed."""


class LinkPartQuerySet(AppendOnly, CaseScopedQuerySet):
    """A link's confirmation or withdrawal: through the link's case."""

    case_field = "link__case"


class SavedSearchQuerySet(CaseScopedQuerySet):
    def visible_to(self, user: User | None) -> Self:
        """The searches of the user's cases they own, and those shared with the case."""
        if user is None or not user.is_authenticated:
            return self.none()
        return super().visible_to(user).filter(Q(owner_id=user.pk) | Q(shared=True))
