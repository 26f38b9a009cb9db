"""What is said about an item: its description, tags, and who is identified in it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.db import transaction

from casefiles import audit
from casefiles.reviewing import ReviewStatus, content_changed_within

from ..models import (
    EvidenceItem,
)

if TYPE_CHECKING:
    from django.contrib.auth.models import User as Account


def record_identification(*, actor: Account, item: EvidenceItem, **fields: Any):
    """A witness identifies a person in an item; both must belong to the item's case."""
    from people.models import CaseRole

    from ..models import Identification

    people = {fields["witness"].pk, fields["identified"].pk}
    in_case = set(
        CaseRole.objects.filter(case=item.case, person__in=people).values_list(
            "person_id", flat=True
        )
    )
    if in_case != people:
        raise ValueError("Both people must have a role in the item's case.")
    with transaction.atomic(durable=True):
        identification = Identification.objects.create(
            case=item.case, item=item, recorded_by=actor, **fields
        )
        audit.record(
            actor,
            "evidence.identification",
            target=item,
            case=item.case,
            witness=str(fields["witness"]),
            identified=str(fields["identified"]),
            confidence=fields["confidence"],
        )
    return identification


def update_item(*, actor: Account, item: EvidenceItem, tags: list[str], **fields: Any) -> None:
    """Change what is stated about an item (never its file or extracted metadata). Whoever
    restates it may not approve it; an approved item goes back for review."""
    from ..models import Tag

    changes: dict[str, Any] = {
        name: [str(getattr(item, name) or ""), str(value or "")]
        for name, value in fields.items()
        if getattr(item, name) != value
    }
    before: list[str] = sorted(item.tags.values_list("name", flat=True))
    if before != tags:
        changes["tags"] = [before, tags]
    if not changes:
        return
    restated = any(name != "tags" for name in changes)
    with transaction.atomic(durable=True):
        for name, value in fields.items():
            setattr(item, name, value)
        if restated:
            item.changed_by = actor
        item.save(update_fields=[*fields, "changed_by"] if restated else list(fields))
        if restated and item.review_status == ReviewStatus.APPROVED:
            content_changed_within(actor, item, item.original.sha256)
        for name in tags:
            Tag.objects.get_or_create(case=item.case, name=name)
        item.tags.set(Tag.objects.filter(case=item.case, name__in=tags))
        audit.record(actor, "evidence.update", target=item, case=item.case, changes=changes)
