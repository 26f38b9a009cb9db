"""Opening a case and changing its descriptive fields."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.db import transaction

from .. import audit
from ..models import (
    Case,
)

if TYPE_CHECKING:
    from django.contrib.auth.models import User as Account


def create_case(
    *,
    actor: Account,
    reference: str,
    title: str,
    summary: str = "",
    status: str = Case.Status.OPEN,
    sensitivity: str = Case.Sensitivity.CONFIDENTIAL,
    jurisdiction: str = "",
) -> Case:
    """Open a new case. Its members are granted separately."""
    case = Case(
        reference=reference,
        title=title,
        summary=summary,
        status=status,
        sensitivity=sensitivity,
        jurisdiction=jurisdiction,
        created_by=actor,
    )
    case.full_clean()
    with transaction.atomic(durable=True):
        case.save()
        audit.record(actor, "case.create", target=case, case=case, reference=reference)
    return case


def update_case(*, actor: Account, case: Case, **changes: Any) -> Case:
    """Change a case's descriptive fields; the audit entry keeps before and after."""
    before = {name: getattr(case, name) for name in changes}
    for name, value in changes.items():
        setattr(case, name, value)
    case.full_clean()
    changed = {n: [before[n], v] for n, v in changes.items() if before[n] != v}
    if not changed:
        return case
    with transaction.atomic(durable=True):
        case.save(update_fields=list(changed))
        audit.record(actor, "case.update", target=case, case=case, changes=changed)
    return case
