"""Assessments: one assessor's grading of an item or a testimony, kept as written."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.db import transaction

from casefiles import audit
from casefiles.models import Case

from ..models import Assessment
from .common import Reviewed, record_fields, require_reviewer

if TYPE_CHECKING:
    from django.contrib.auth.models import User as Account


def assess(
    *,
    actor: Account,
    case: Case,
    record: Reviewed,
    reliability: str,
    credibility: str,
    consistency: str,
    geolocation: str,
    rationale: str,
    authenticity: str = "",
) -> Assessment:
    """Record the actor's assessment; an earlier one of theirs stays, the page shows the
    latest of each assessor."""
    require_reviewer(actor, case, record)
    assessment = Assessment(
        case=case,
        assessor=actor,
        reliability=reliability,
        credibility=credibility,
        consistency=consistency,
        geolocation=geolocation,
        authenticity=authenticity.strip(),
        rationale=rationale.strip(),
        **record_fields(record),
    )
    assessment.full_clean()
    with transaction.atomic(durable=True):
        assessment.save()
        audit.record(
            actor,
            "legal.assess",
            target=record,
            case=case,
            binds={Assessment: [assessment.pk]},
            grade=f"{reliability}{credibility}",
            consistency=consistency,
            geolocation=geolocation,
        )
    return assessment


def latest_assessments(record: Reviewed) -> list[Assessment]:
    """The latest assessment of each assessor of ``record``, oldest assessor first."""
    latest: dict[int, Assessment] = {}
    for a in record.assessments.select_related("assessor").order_by("at", "pk"):
        latest[a.assessor_id] = a
    return sorted(latest.values(), key=lambda a: (a.assessor.get_username(), a.pk))
