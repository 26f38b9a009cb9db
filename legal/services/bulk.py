"""Bulk actions on a case's items: on a selection, or on everything a workspace filter
matches (docs/decisions/0012-bulk-actions.md).

``preview`` says how many items an action will change and how many it will skip, and
why, in one query: the confirmation page shows it. ``start_bulk`` records the job (what
was asked, on which items, up to the newest item then: none taken in afterwards joins
it), audited. ``run_bulk`` changes the items in chunks of ``CHUNK``: each chunk one
durable transaction whose audit entry names every item it changed (their references)
and binds the rows it wrote (review decisions, links), as ``review.decide`` binds one;
the job's counts and cursor move in that same transaction, so a run cut short resumes
after the last chunk committed. More than ``INLINE_LIMIT`` items run as a task.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.db.models import Count, Max, QuerySet
from django.http import QueryDict
from django.utils import timezone
from django.utils.translation import gettext as _

from casefiles import audit
from casefiles.access import role_in
from casefiles.models import Case
from evidence.models import EvidenceItem
from people import reads as people_reads

from ..filters import WorkspaceFilter
from ..models import BulkJob
from .bulk_actions import ACTIONS, BulkAction, Resolved, Row, may_take, reason_of

if TYPE_CHECKING:
    from django.contrib.auth.models import User as Account

CHUNK = 1000  # items per transaction and audit entry
INLINE_LIMIT = 500  # more than this runs as a task, with a progress page
MAX_SELECTION = 5000  # items chosen one by one (a page shows 48)


class JobMoved(Exception):
    """Another run of the same job is further along: this one stops."""


@dataclass(frozen=True)
class Preview:
    total: int
    skipped: dict[str, int]  # reason: count

    @property
    def changes(self) -> int:
        return self.total - sum(self.skipped.values())


def action_named(name: str) -> BulkAction:
    if name not in ACTIONS:
        raise ValidationError({"action": _("Choose one of the actions offered.")})
    return ACTIONS[name]


def check(actor: Account, case: Case, name: str, values: dict[str, Any]) -> Resolved:
    """The action's values, looked up, if ``actor`` may take it on ``case``'s items."""
    action = action_named(name)
    if not may_take(actor, case, action):
        raise PermissionDenied(_("Your role in this case does not allow this step."))
    return action.resolve(case, values)


def newest_item(case: Case) -> int:
    return EvidenceItem.objects.filter(case=case).aggregate(m=Max("pk"))["m"] or 0


def targets(
    actor: Account, case: Case, *, query: str, selection: Sequence[int] | None, through: int
) -> QuerySet[EvidenceItem]:
    """The items a job works on: those chosen, or those the filter ``query`` matches,
    none newer than ``through``. A filter with a value it refuses is refused whole (it
    would otherwise widen to more items than the user chose)."""
    items = EvidenceItem.objects.visible_to(actor).filter(case=case, pk__lte=through)
    if selection is not None:
        return items.filter(pk__in=list(selection))
    filterset = WorkspaceFilter(QueryDict(query), queryset=items, case=case)
    if not filterset.is_valid():
        raise ValidationError(_("The filter is not valid: correct it first."))
    found = filterset.qs
    if filterset.by_content():
        found = found.exclude(people_reads.withheld(actor, case))
    return found


def preview(actor: Account, case: Case, name: str, resolved: Resolved, items: QuerySet) -> Preview:
    """How many of ``items`` the action changes and skips (by reason): one query."""
    reason = reason_of(ACTIONS[name], resolved, actor, case)
    counted = items.annotate(reason=reason).values("reason").annotate(n=Count("pk")).order_by()
    found = {row["reason"]: row["n"] for row in counted}
    return Preview(sum(found.values()), {r: n for r, n in found.items() if r})


def start_bulk(
    *,
    actor: Account,
    case: Case,
    action: str,
    values: dict[str, Any],
    query: str = "",
    selection: Sequence[int] | None = None,
    through: int,
) -> BulkJob:
    """Record a confirmed bulk action (audited); ``run_bulk`` or its task carries it out."""
    resolved = check(actor, case, action, values)
    if selection is not None and len(selection) > MAX_SELECTION:
        raise ValidationError(_("Choose fewer items, or act on everything the filter matches."))
    chosen = list(selection) if selection is not None else None
    items = targets(actor, case, query=query, selection=chosen, through=through)
    with transaction.atomic(durable=True):
        total = items.count()
        job = BulkJob.objects.create(
            case=case,
            actor=actor,
            action=action,
            params=resolved.values,
            query=query if chosen is None else "",
            selection=chosen,
            through=through,
            total=total,
        )
        audit.record(
            actor,
            "legal.bulk_start",
            target=job,
            case=case,
            bulk_action=action,
            total=total,
            filter=job.query,
            selected=chosen is not None,
            **resolved.details(),
        )
    return job


def runs_inline(job: BulkJob) -> bool:
    return job.total <= INLINE_LIMIT


def run_bulk(job: BulkJob) -> BulkJob:
    """Carry out a job from where it stands, chunk by chunk; close it with its totals."""
    if job.status == BulkJob.Status.DONE:
        return job
    BulkJob.objects.filter(pk=job.pk).update(status=BulkJob.Status.RUNNING)
    actor, case = job.actor, job.case
    # The actor's role, read once for the run (as the pages read it with the case).
    case.viewer_id, case.viewer_role = actor.pk, role_in(actor, case)  # type: ignore[attr-defined]
    try:
        resolved = check(actor, case, job.action, job.params)
        items = targets(actor, case, query=job.query, selection=job.selection, through=job.through)
        pks = list(items.filter(pk__gt=job.cursor).order_by("pk").values_list("pk", flat=True))
        for chunk in _chunks(pks, CHUNK):
            _run_chunk(job, resolved, chunk)
    except JobMoved:
        job.refresh_from_db(fields=["status", "done", "changed", "skipped", "cursor"])
        return job
    except (PermissionDenied, ValidationError) as exc:  # no longer allowed, or no longer valid
        _finish(job, error=" ".join(getattr(exc, "messages", [str(exc)])))
        return job
    _finish(job)
    return job


def fail_bulk(job: BulkJob, error: str) -> None:
    """A run stopped by an error the job could not foresee: say so on its page, audited
    with how far it got (what its chunks committed stands; a new run resumes after it)."""
    error = error[:2000]
    with transaction.atomic(durable=True):
        done, changed = BulkJob.objects.filter(pk=job.pk).values_list("done", "changed").get()
        BulkJob.objects.filter(pk=job.pk).update(
            status=BulkJob.Status.FAILED, error=error, finished_at=timezone.now()
        )
        audit.record(
            job.actor,
            "legal.bulk_failed",
            target=job,
            case=job.case,
            bulk_action=job.action,
            total=job.total,
            done=done,
            changed=changed,
            error=error,
        )


def _chunks(pks: list[int], size: int) -> Iterator[list[int]]:
    for i in range(0, len(pks), size):
        yield pks[i : i + size]


def _run_chunk(job: BulkJob, resolved: Resolved, chunk: list[int]) -> None:
    action = ACTIONS[job.action]
    actor, case = job.actor, job.case
    with transaction.atomic(durable=True):
        locked = BulkJob.objects.select_for_update().get(pk=job.pk)
        if locked.cursor != job.cursor:
            raise JobMoved
        rows = [
            Row(*values)
            for values in EvidenceItem.objects.filter(pk__in=chunk)
            .select_for_update(of=("self",))
            .annotate(reason=reason_of(action, resolved, actor, case))
            .order_by("pk")
            .values_list("pk", "reference", "review_status", "original__sha256", "reason")
        ]
        changing = [row for row in rows if not row.reason]
        skipped = Counter(row.reason for row in rows if row.reason)
        bound = action.apply(actor, case, resolved, changing) if changing else {}
        job.cursor = chunk[-1]
        job.done += len(chunk)
        job.changed += len(changing)
        job.skipped = dict(Counter(job.skipped) + skipped)
        job.save(update_fields=["cursor", "done", "changed", "skipped"])
        audit.record(
            actor,
            action.verb,
            target=job,
            case=case,
            binds=bound,
            items=[row.reference for row in changing],
            skipped=dict(skipped),
            **resolved.details(),
        )


def _finish(job: BulkJob, error: str = "") -> None:
    with transaction.atomic(durable=True):
        job.status = BulkJob.Status.FAILED if error else BulkJob.Status.DONE
        job.error = error
        job.finished_at = timezone.now()
        job.save(update_fields=["status", "error", "finished_at"])
        audit.record(
            job.actor,
            "legal.bulk_done",
            target=job,
            case=job.case,
            bulk_action=job.action,
            total=job.total,
            changed=job.changed,
            skipped=job.skipped,
            error=error,
        )
