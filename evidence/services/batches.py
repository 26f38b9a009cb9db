"""Intake batches: opened with the medium's custody event, found again to resume, marked
interrupted when a run stops on an error."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from django.db import transaction
from django.utils import timezone

from casefiles import audit
from casefiles.bulk import insert_rows

from ..custody_events import record_custody
from ..models import (
    CustodyEvent,
    EvidenceCounter,
    IntakeBatch,
)
from .words import NOTE_MEDIUM, PURPOSE_INTAKE

if TYPE_CHECKING:
    from django.contrib.auth.models import User as Account

    from casefiles.models import Case


def create_batch(
    *,
    actor: Account,
    case: Case,
    source_root: str,
    acquired_from: str,
    medium: str = "",
    medium_serial: str = "",
    method: str = "",
    label: str = "",
    source_sha256: str = "",
    source_size: int | None = None,
    name_encoding: str = "",
    graphic: bool = False,
) -> IntakeBatch:
    """Open an intake batch, with the medium's own "acquired" custody event; ``graphic``:
    every item it takes in is marked graphic."""
    with transaction.atomic(durable=True):
        return _create_batch(
            actor=actor,
            case=case,
            source_root=source_root,
            acquired_from=acquired_from,
            medium=medium,
            medium_serial=medium_serial,
            method=method,
            label=label,
            source_sha256=source_sha256,
            source_size=source_size,
            name_encoding=name_encoding,
            graphic=graphic,
        )


def _create_batch(
    *,
    actor: Account,
    case: Case,
    source_root: str,
    acquired_from: str,
    medium: str = "",
    medium_serial: str = "",
    method: str = "",
    label: str = "",
    source_sha256: str = "",
    source_size: int | None = None,
    name_encoding: str = "",
    graphic: bool = False,
) -> IntakeBatch:
    """The batch and its "acquired" event, inside the caller's transaction."""
    batch = IntakeBatch.objects.create(
        case=case,
        label=label or Path(source_root).name or source_root,
        source_root=source_root,
        acquired_from=acquired_from,
        medium=medium,
        medium_serial=medium_serial,
        method=method,
        created_by=actor,
        source_sha256=source_sha256,
        source_size=source_size,
        name_encoding=name_encoding,
        graphic=graphic,
    )
    record_custody(
        [
            dict(
                case_id=case.pk,
                batch_id=batch.pk,
                action=CustodyEvent.Action.ACQUIRED,
                at=timezone.now(),
                actor_id=actor.pk,
                from_custodian=acquired_from,
                to_custodian=actor.get_username(),
                purpose=PURPOSE_INTAKE,
                sha256=source_sha256,
                hash_result=CustodyEvent.HashResult.MATCH if source_sha256 else "",
                notes=(NOTE_MEDIUM % {"medium": f"{medium} {medium_serial}"}).strip(),
            )
        ],
        actor=actor,
        action="evidence.batch_open",
        target=batch,
        case=case,
        source=source_root,
        **({"graphic": True} if graphic else {}),
    )
    return batch


def find_resumable_batch(
    *, case: Case, source_root: str, acquired_from: str, medium: str
) -> IntakeBatch | None:
    """The batch a re-run continues: the same path, from the same person, same medium.

    A mount point reused for another medium or another source opens a new batch, so new
    evidence never takes an earlier batch's provenance.
    """
    return (
        IntakeBatch.objects.filter(
            case=case, source_root=source_root, acquired_from=acquired_from, medium=medium
        )
        .order_by("-created_at")
        .first()
    )


def resumable_batch(
    *, case: Case, source_root: str, acquired_from: str, medium: str, files: Iterable[Any]
) -> IntakeBatch | None:
    """The batch a re-run of this intake continues, if the medium is still the same."""
    batch = find_resumable_batch(
        case=case, source_root=source_root, acquired_from=acquired_from, medium=medium
    )
    if batch is not None and not holds_same_files(batch, files):
        return None  # the same path now holds another medium: a batch of its own
    return batch


def open_batch(
    *,
    case: Case,
    source_root: str,
    acquired_from: str,
    medium: str,
    resume_files: Iterable[Any] | None,
    **fields: Any,
) -> IntakeBatch:
    """A new batch, unless (``resume_files`` given) another run has just opened one for
    the same medium: decided under the case's intake lock, so two runs started at once
    share one batch (the second is then refused its claim) instead of taking every file
    in twice."""
    where: dict[str, Any] = dict(
        case=case, source_root=source_root, acquired_from=acquired_from, medium=medium
    )
    with transaction.atomic(durable=True):
        lock_case_intake(case)
        if resume_files is not None and (batch := resumable_batch(**where, files=resume_files)):
            return batch
        return _create_batch(**where, **fields)


def record_name_encoding(*, actor: Account, batch: IntakeBatch, encoding: str) -> None:
    """Record the encoding a ZIP batch's names are read with from now on, one that renames
    nothing it has taken in (the intake pipeline checks); audited with the one it replaces."""
    with transaction.atomic(durable=True):
        IntakeBatch.objects.filter(pk=batch.pk).update(name_encoding=encoding)
        audit.record(
            actor,
            "evidence.batch_name_encoding",
            target=batch,
            case=batch.case,
            encoding=encoding,
            was=batch.name_encoding,
        )
    batch.name_encoding = encoding


def interrupt_batch(*, actor: Account, batch: IntakeBatch, reason: str) -> None:
    """A run stopped by an error it could not foresee: the batch is marked interrupted,
    its claim given back and the reason added to its problems (its page says what
    stopped it; a new run resumes it), audited in the same transaction."""
    reason = reason[:2000]
    problems = [*batch.problems, {"path": "", "kind": "failed", "reason": reason}]
    with transaction.atomic(durable=True):
        IntakeBatch.objects.filter(pk=batch.pk).update(
            status=IntakeBatch.Status.INTERRUPTED, claimed_by="", problems=problems
        )
        audit.record(
            actor, "evidence.batch_interrupted", target=batch, case=batch.case, reason=reason
        )
    batch.status, batch.claimed_by, batch.problems = IntakeBatch.Status.INTERRUPTED, "", problems


def holds_same_files(batch: IntakeBatch, files: Iterable[Any]) -> bool:
    """Whether the files now at a batch's source are the ones it took in, as far as their
    sizes tell: another card mounted at the same path, with the same folder and file
    names (DCIM/IMG_0001.JPG), is another medium, and must not have its files skipped
    as already done."""
    if batch.source_size is not None and batch.source_root:
        try:
            if Path(batch.source_root).stat().st_size != batch.source_size:
                return False  # another archive at the same path
        except OSError:
            return False
    sizes = dict(batch.items.values_list("source_key", "original__size"))
    for source in files:
        size = sizes.get(source.key)
        if size is None:
            continue
        if source.declared_size is not None:
            actual = source.declared_size
        else:
            try:
                actual = Path(source.fs_path).stat().st_size
            except OSError:
                continue  # gone since it was listed: nothing of it would be skipped wrongly
        if actual != size:
            return False
    return True


def done_source_keys(batch: IntakeBatch) -> set[str]:
    return set(batch.items.values_list("source_key", flat=True))


def lock_case_intake(case: Case) -> EvidenceCounter:
    """Take the case's intake lock (its EV- counter row) until the transaction ends: one
    statement once the row exists (it is made by the case's first batch)."""
    locked = EvidenceCounter.objects.select_for_update().filter(case=case)
    if (counter := locked.first()) is None:
        insert_rows(EvidenceCounter, [dict(case_id=case.pk, last=0)], ignore_conflicts=True)
        counter = locked.get()
    return counter
