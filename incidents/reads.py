"""The reads of incidents: what pages and the API call, never a manager. Each starts from
``visible_to`` (case access); a lookup answers 404 for what the user may not see. The
records an incident links are found through their own apps' reads modules."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.db.models import Prefetch, QuerySet
from django.shortcuts import get_object_or_404

from evidence import reads as evidence_reads
from legal import reads as legal_reads
from people import reads as people_reads

from .models import Act, Incident, Link, Perpetrator

if TYPE_CHECKING:
    from casefiles.access import User
    from casefiles.models import Case


def incidents_in(user: User | None, case: Case) -> QuerySet:
    return Incident.objects.visible_to(user).filter(case=case)


def get_incident_for_user(user: User | None, case: Case, reference: str) -> Incident:
    incident = get_object_or_404(
        incidents_in(user, case).select_related("place"), reference=reference
    )
    incident.case = case  # the one carrying the viewer's role
    return incident


def people_offered(user: User | None, case: Case) -> QuerySet:
    """The people of the case, by pseudonym, as a form offers them."""
    return people_reads.people_in_case(user, case).order_by("code")


def acts_of(user: User | None, incident: Incident) -> QuerySet:
    return Act.objects.visible_to(user).filter(incident=incident)


def acts_shown(user: User | None, incident: Incident) -> QuerySet:
    """The incident's acts with their victims, kinds and perpetrators, as its page shows."""
    return (
        acts_of(user, incident)
        .select_related("victim", "act_type", "method")
        .prefetch_related(
            Prefetch(
                "perpetrators",
                queryset=Perpetrator.objects.select_related("unit", "person", "involvement"),
            )
        )
        .order_by("pk")
    )


def get_act_for_user(user: User | None, incident: Incident, pk: int) -> Act:
    act = get_object_or_404(acts_of(user, incident), pk=pk)
    act.incident = incident
    return act


def links_of(user: User | None, incident: Incident) -> QuerySet:
    return Link.objects.visible_to(user).filter(incident=incident)


def record_named(user: User | None, case: Case, *, testimony: int | None = None, text: str = ""):
    """The record a link names: testimony ``testimony`` of the case, else the legal
    element whose code is ``text``, else the case's item with reference ``text``; None."""
    if testimony is not None:
        found = people_reads.testimony_in_case(user, case, testimony)
        if found is not None:
            return found
    element = legal_reads.element_by_code(text)
    if element is not None:
        return element
    return evidence_reads.item_in_case(user, case, text)
