"""One chunk of intake results written: items, provenance, thumbnails, custody, audit."""

from __future__ import annotations

from decimal import Decimal
from typing import TYPE_CHECKING

from django.db import transaction
from django.db.models import Count, F, Q
from django.utils import timezone

from casefiles.bulk import insert_rows

from ..custody_events import record_custody
from ..hooks import positions_recorded_within
from ..imaging import TOOL
from ..intake.payload import IntakeResult
from ..media import recorded_day
from ..models import (
    CustodyEvent,
    Derivative,
    EvidenceCounter,
    EvidenceItem,
    IntakeBatch,
    Provenance,
    StoredFile,
)
from .batches import lock_case_intake
from .custody import set_integrity
from .words import NOTE_FIRST_READ, NOTE_REVERIFIED, NOTE_STORE_DIFFERS, PURPOSE_INTAKE

if TYPE_CHECKING:
    from django.contrib.auth.models import User as Account

    from casefiles.models import Case


def next_references(case: Case, n: int) -> list[str]:
    """``n`` new EV- references of the case, under its intake lock."""
    counter = lock_case_intake(case)
    first = counter.last + 1
    EvidenceCounter.objects.filter(pk=counter.pk).update(last=F("last") + n)
    return [f"EV-{number:06d}" for number in range(first, first + n)]


def _stored_files(results: list[IntakeResult]) -> dict[str, StoredFile]:
    wanted: dict[str, IntakeResult] = {}
    for r in results:
        wanted.setdefault(r.sha256, r)
    insert_rows(
        StoredFile,
        [
            dict(
                sha256=sha,
                size=r.size,
                media_type=r.media_type,
                storage_key=r.storage_key,
                md5=r.md5,
                sha1=r.sha1,
            )
            for sha, r in wanted.items()
        ],
        ignore_conflicts=True,
    )
    files = {sf.sha256: sf for sf in StoredFile.objects.filter(sha256__in=list(wanted))}
    # Extra digests asked for now (a custodian's md5 list) fill what earlier intakes left.
    for name in ("md5", "sha1"):
        missing = [
            sf
            for sf in files.values()
            if not getattr(sf, name) and getattr(wanted[sf.sha256], name)
        ]
        for sf in missing:
            setattr(sf, name, getattr(wanted[sf.sha256], name))
        if missing:
            StoredFile.objects.bulk_update(missing, [name])
    return files


def record_intake(
    *,
    actor: Account,
    case: Case,
    batch: IntakeBatch | None,
    results: list[IntakeResult],
    acquired_from: str,
    method: str = "",
    medium: str = "",
    medium_serial: str = "",
    problems: list[dict[str, str]] | None = None,
    total: int | None = None,
) -> int:
    """Write one chunk of intake results: items, provenance, thumbnails, custody, audit;
    with ``problems`` and ``total`` (a batch's run so far), the batch's counts too.

    One durable transaction, the same statements whatever the chunk's size (rows written
    with ``insert_rows``: this is the coordinator's hot path), its audit entry inside.
    Returns the items written.
    """
    stored = [r for r in results if r.stored]
    if not stored and problems is None:
        return 0
    with transaction.atomic(durable=True):
        if stored:
            _write_results(actor, case, batch, stored, acquired_from, method, medium, medium_serial)
        if batch is not None and problems is not None:
            refresh_batch_counts(batch, problems, total if total is not None else batch.total)
        elif batch is not None:
            IntakeBatch.objects.filter(pk=batch.pk).update(heartbeat_at=timezone.now())
    return len(stored)


def _write_results(
    actor: Account,
    case: Case,
    batch: IntakeBatch | None,
    stored: list[IntakeResult],
    acquired_from: str,
    method: str,
    medium: str,
    medium_serial: str,
) -> None:
    """The rows of a chunk's stored results, inside the caller's transaction."""
    now = timezone.now()
    files = _stored_files(stored)
    # Thumbnails, and a graphic batch's blurred ones: one statement for both.
    insert_rows(
        Derivative,
        [
            dict(
                original_id=files[r.sha256].pk,
                kind=kind,
                storage_key=made.key,
                media_type="image/jpeg",
                width=made.width,
                height=made.height,
                size=made.size,
                tool=TOOL,
                parameters=made.parameters,
            )
            for r in stored
            for kind, made in (
                (Derivative.Kind.THUMBNAIL, r.thumbnail),
                (Derivative.Kind.BLURRED, r.blurred),
            )
            if made
        ],
        ignore_conflicts=True,
    )
    graphic = batch.graphic if batch else False  # marked as written, never afterwards
    # The counter's row lock serialises intakes into one case before "duplicate" is
    # decided, so two concurrent ingests cannot both call the same bytes new.
    references = next_references(case, len(stored))
    in_case = set(
        EvidenceItem.objects.filter(case=case, original__in=files.values()).values_list(
            "original_id", flat=True
        )
    )
    rows, known = [], []
    for r, reference in zip(stored, references, strict=True):
        sf = files[r.sha256]
        known.append(sf.pk in in_case)
        rows.append(
            dict(
                case_id=case.pk,
                reference=reference,
                kind=r.kind,
                title=r.source.name[:300],
                original_filename=r.source.name[:255],
                original_path=r.source.path,
                original_id=sf.pk,
                is_duplicate=sf.pk in in_case,
                batch_id=batch.pk if batch else None,
                source_key=r.source.key if batch else "",
                flags=r.flags,
                is_flagged=bool(r.flags),
                phash=r.phash,
                is_graphic=graphic,
            )
        )
        in_case.add(sf.pk)
    # The rows' keys come back with their references (in no promised order).
    written = insert_rows(EvidenceItem, rows, returning=True, also_returning=("reference",))
    pks = {reference: pk for pk, reference in written or []}
    item_pks = [pks[reference] for reference in references]
    insert_rows(
        Provenance,
        [
            dict(
                item_id=pk,
                acquired_from=acquired_from,
                acquired_by_id=actor.pk,
                acquired_at=now,
                method=method,
                medium=medium,
                medium_serial=medium_serial,
                metadata=r.metadata,
                camera_make=r.camera_make,
                camera_model=r.camera_model,
                taken_at=r.taken_at,
                taken_date=recorded_day(r.taken_at) if r.taken_at else None,
                gps_latitude=Decimal(str(r.gps[0])) if r.gps else None,
                gps_longitude=Decimal(str(r.gps[1])) if r.gps else None,
                orientation=r.orientation,
                width=r.width,
                height=r.height,
            )
            for pk, r in zip(item_pks, stored, strict=True)
        ],
    )
    positions_recorded_within(
        case.pk,
        [
            (pk, Decimal(str(r.gps[0])), Decimal(str(r.gps[1])))
            for pk, r in zip(item_pks, stored, strict=True)
            if r.gps
        ],
    )
    changed = [pk for pk, r in zip(item_pks, stored, strict=True) if r.existing == "mismatch"]
    if changed:
        set_integrity(changed, CustodyEvent.HashResult.MISMATCH)
    # One entry per transaction names every item it took in (reference, SHA-256,
    # path): the same trace as an entry per item, at a fraction of the chain's cost;
    # it binds each item's custody event.
    record_custody(
        [
            dict(
                case_id=case.pk,
                item_id=pk,
                batch_id=batch.pk if batch else None,
                action=CustodyEvent.Action.ACQUIRED,
                at=now,
                actor_id=actor.pk,
                from_custodian=acquired_from,
                to_custodian=actor.get_username(),
                purpose=PURPOSE_INTAKE,
                sha256=r.sha256,
                hash_result=_intake_hash_result(r),
                notes=_intake_note(r, in_case=was_in_case),
            )
            for pk, r, was_in_case in zip(item_pks, stored, known, strict=True)
        ],
        actor=actor,
        action="evidence.intake",
        target=batch,
        case=case,
        items=[
            [reference, r.sha256, r.source.path]
            for reference, r in zip(references, stored, strict=True)
        ],
    )


def _intake_hash_result(r: IntakeResult) -> str:
    if r.existing == "mismatch":
        return CustodyEvent.HashResult.MISMATCH
    return CustodyEvent.HashResult.MATCH


def _intake_note(r: IntakeResult, *, in_case: bool) -> str:
    if r.existing == "mismatch":  # an alarm about the store itself: always said
        return NOTE_STORE_DIFFERS
    # Whether another case holds the same bytes is that case's business: the note
    # speaks of earlier copies only when they are in this case.
    if r.existing == "match" and in_case:
        return NOTE_REVERIFIED
    return NOTE_FIRST_READ


def refresh_batch_counts(
    batch: IntakeBatch, problems: list[dict[str, str]], total: int | None
) -> None:
    """Counts derived from what is in the database, so they are right after any crash
    (inside the caller's transaction); the batch in hand is given them too."""
    agg = batch.items.aggregate(
        items=Count("pk"),
        duplicate=Count("pk", filter=Q(is_duplicate=True)),
        flagged=Count("pk", filter=Q(is_flagged=True)),
    )
    failed = sum(1 for p in problems if p["kind"] == "failed")
    skipped = sum(1 for p in problems if p["kind"] == "skipped")
    counts = dict(
        seen=agg["items"] + failed + skipped,
        stored=agg["items"] - agg["duplicate"],
        duplicate=agg["duplicate"],
        flagged=agg["flagged"],
    )
    now = timezone.now()
    IntakeBatch.objects.filter(pk=batch.pk).update(
        total=total,
        **counts,
        failed=failed,
        skipped=skipped,
        problems=problems,
        heartbeat_at=now,
    )
    batch.total, batch.seen, batch.stored = total, counts["seen"], counts["stored"]
    batch.duplicate, batch.flagged = counts["duplicate"], counts["flagged"]
    batch.failed, batch.skipped, batch.problems = failed, skipped, problems
    batch.heartbeat_at = now
