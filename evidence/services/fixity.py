"""Fixity sweeps: every stored original re-hashed, its result recorded in chunks."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from casefiles import audit
from casefiles.models import Case

from ..custody_events import record_custody
from ..models import (
    CustodyEvent,
    EvidenceItem,
    IntakeBatch,
    StoredFile,
)
from .custody import rehash, set_integrity
from .words import CHECKED_CUSTODIAN_LIST, CHECKED_MANIFEST, NOTE_FOUND, PURPOSE_FIXITY

if TYPE_CHECKING:
    from django.contrib.auth.models import User as Account


def run_fixity(*, actor: Account | None = None, case: Case | None = None, progress=None):
    """Re-hash every stored original (of a case, or all); record what was found."""
    from ..models import FixityCheck

    items = EvidenceItem.objects.select_related("original", "case")
    if case is not None:
        items = items.filter(case=case)
    by_file: dict[int, list[EvidenceItem]] = {}
    files: dict[int, StoredFile] = {}
    for item in items.iterator(chunk_size=2000):
        by_file.setdefault(item.original_id, []).append(item)
        files[item.original_id] = item.original
    # The intake manifests and the custodians' lists are evidence of the intake itself:
    # their bytes are checked too, each result a custody event of its batch.
    records: dict[int, list[tuple[IntakeBatch, str]]] = {}
    batches = IntakeBatch.objects.select_related("manifest", "custodian_manifest", "case")
    if case is not None:
        batches = batches.filter(case=case)
    for batch in batches.filter(Q(manifest__isnull=False) | Q(custodian_manifest__isnull=False)):
        for sf, what in (
            (batch.manifest, CHECKED_MANIFEST),
            (batch.custodian_manifest, CHECKED_CUSTODIAN_LIST),
        ):
            if sf is not None:
                records.setdefault(sf.pk, []).append((batch, what))
                files.setdefault(sf.pk, sf)
                by_file.setdefault(sf.pk, [])
    with transaction.atomic(durable=True):
        check = FixityCheck.objects.create(case=case, started_at=timezone.now(), actor=actor)
        # The sweep's own entry (evidence.fixity, at its end) is the one that targets it.
        audit.record(actor, "evidence.fixity_start", case=case, check=check.pk, files=len(files))
    changed, missing, ok = [], [], 0
    pending: list[tuple[list[EvidenceItem], str, str]] = []
    batch_events: list[dict[str, Any]] = []
    for n, (file_id, sf) in enumerate(files.items(), 1):
        actual, unreadable = rehash(sf)
        if actual is None:
            result, note = CustodyEvent.HashResult.MISSING, unreadable
            missing.append(sf.sha256)
        elif actual != sf.sha256:
            result, note = CustodyEvent.HashResult.MISMATCH, NOTE_FOUND % {"sha256": actual}
            changed.append(sf.sha256)
        else:
            result, note = CustodyEvent.HashResult.MATCH, ""
            ok += 1
        pending.append((by_file[file_id], result, note))
        batch_events += [
            dict(
                case_id=batch.case_id,
                batch_id=batch.pk,
                action=CustodyEvent.Action.STORED,
                at=timezone.now(),
                actor_id=actor.pk if actor else None,
                purpose=PURPOSE_FIXITY % {"n": check.pk},
                sha256=sf.sha256,
                hash_result=result,
                notes=f"{what}; {note}" if note else what,
            )
            for batch, what in records.get(file_id, [])
        ]
        if len(pending) >= 500 or n == len(files):
            _write_fixity(actor, check, pending)
            pending = []
        if progress:
            progress(n, len(files))
    check.files_checked = len(files)
    check.items_checked = sum(len(v) for v in by_file.values())
    check.ok, check.changed, check.missing = ok, changed, missing
    check.finished_at = timezone.now()
    with transaction.atomic(durable=True):
        check.save()
        record_custody(  # the intake manifests' results, bound by the sweep's own entry
            batch_events,
            actor=actor,
            action="evidence.fixity",
            target=check,
            case=case,
            files=check.files_checked,
            changed=len(changed),
            missing=len(missing),
        )
    return check


def _write_fixity(actor, check, pending) -> None:
    now = timezone.now()
    with transaction.atomic(durable=True):
        events = []
        for items, result, note in pending:
            for item in items:
                events.append(
                    dict(
                        case_id=item.case_id,
                        item_id=item.pk,
                        action=CustodyEvent.Action.STORED,
                        at=now,
                        actor_id=actor.pk if actor else None,
                        purpose=PURPOSE_FIXITY % {"n": check.pk},
                        sha256=item.original.sha256,
                        hash_result=result,
                        notes=note,
                    )
                )
            set_integrity([i.pk for i in items], result)
        # Each chunk's events are bound by an entry of their own: a sweep of a large
        # archive is many transactions, and none leaves a custody row unbound
        # (docs/decisions/0008-chunked-writes.md). A sweep of every case binds each
        # case's events by an entry of that case: a case's disclosure package takes the
        # entries of its case, and no entry of one case names another's rows.
        groups: list[tuple[Case | None, list[dict[str, Any]]]] = [(check.case, events)]
        if check.case is None and events:
            by_case: dict[int, list[dict[str, Any]]] = {}
            for event in events:
                by_case.setdefault(event["case_id"], []).append(event)
            cases = Case.objects.in_bulk(by_case)
            groups = [(cases[pk], of_case) for pk, of_case in by_case.items()]
        for case, of_case in groups:
            record_custody(
                of_case,
                actor=actor,
                action="evidence.fixity_results",
                target=check,
                case=case,
                events=len(of_case),
            )
