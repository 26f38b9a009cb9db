from __future__ import annotations

from casefiles.querysets import AppendOnly, CaseScopedQuerySet


class IncidentQuerySet(CaseScopedQuerySet):
    """Incidents, through their case."""


class IncidentPartQuerySet(CaseScopedQuerySet):
    """An incident's acts and links: through the incident's case."""

    case_field = "incident__case"


class PerpetratorQuerySet(CaseScopedQuerySet):
    case_field = "act__incident__case"


class VersionQuerySet(AppendOnly, CaseScopedQuerySet):
    """Versions of an incident: never changed or deleted."""

    case_field = "incident__case"
