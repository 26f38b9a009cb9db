from __future__ import annotations

from casefiles.querysets import AppendOnly, CaseScopedQuerySet


class ProfileQuerySet(CaseScopedQuerySet):
    """Antemortem profiles, through their case."""


class StatusQuerySet(AppendOnly, CaseScopedQuerySet):
    """A profile's status history: never changed or deleted."""

    case_field = "profile__case"


class SessionQuerySet(CaseScopedQuerySet):
    """Family identification sessions, through their case."""


class CandidateQuerySet(CaseScopedQuerySet):
    case_field = "session__case"
