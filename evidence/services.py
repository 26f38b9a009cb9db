"""Writes to evidence: batched intake rows, custody events, fixity. Each audited."""

from __future__ import annotations

import hashlib
import os
import re
import socket
from collections.abc import Iterable
from datetime import timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any, NamedTuple

from django.db import transaction
from django.db.models import Count, F, Q
from django.utils import timezone
from django.utils.translation import gettext_noop

from casefiles import audit
from casefiles.bulk import insert_rows

from .custody_events import record_custody
from .intake.payload import IntakeResult
from .intake.sources import manifest_name_bytes, recorded_name_bytes
from .intake.steps import TOOL, taken_date
from .models import (
    CustodyEvent,
    Derivative,
    EvidenceCounter,
    EvidenceItem,
    IntakeBatch,
    ManifestEntry,
    Provenance,
    StoredFile,
)
from .storage import evidence_storage

# The app's own words in custody records and provenance: stored in English as written (a
# record is never rewritten), shown in the reader's language where they stand alone (the
# ``own_words`` template filter). Anything else a person typed is shown as typed (a method
# typed as exactly one of these is shown translated too: it says the same).
OWN_WORDS = frozenset(
    {
        PURPOSE_INTAKE := gettext_noop("intake"),
        METHOD_COPIED := gettext_noop("copied from the medium"),
        METHOD_UPLOADED := gettext_noop("uploaded in the browser"),
        NOTE_FIRST_READ := gettext_noop("hashed while first read"),
        NOTE_REVERIFIED := gettext_noop(
            "hashed while read; the copy already in the store was re-verified"
        ),
        NOTE_STORE_DIFFERS := gettext_noop(
            "hashed while read; the copy already in the store DIFFERS from these bytes"
        ),
    }
)
# ... and with a number in them: the pattern of each, and its words.
PURPOSE_FIXITY = gettext_noop("fixity check #%(n)s")
OWN_NUMBERED = ((re.compile(r"fixity check #(?P<n>[0-9]+)"), PURPOSE_FIXITY),)

LEASE = timedelta(minutes=2)


def create_batch(
    *,
    actor: Any,
    case: Any,
    source_root: str,
    acquired_from: str,
    medium: str = "",
    medium_serial: str = "",
    method: str = "",
    label: str = "",
    source_sha256: str = "",
    source_size: int | None = None,
    name_encoding: str = "",
) -> IntakeBatch:
    """Open an intake batch, with the medium's own "acquired" custody event."""
    with transaction.atomic():
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
                    notes=f"medium: {medium} {medium_serial}".strip(),
                )
            ],
            actor=actor,
            action="evidence.batch_open",
            target=batch,
            case=case,
            source=source_root,
        )
    return batch


def find_resumable_batch(
    *, case: Any, source_root: str, acquired_from: str, medium: str
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
    *, case: Any, source_root: str, acquired_from: str, medium: str, files: Iterable[Any]
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
    case: Any,
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
    where = dict(case=case, source_root=source_root, acquired_from=acquired_from, medium=medium)
    with transaction.atomic():
        _lock_case_intake(case)
        if resume_files is not None and (batch := resumable_batch(**where, files=resume_files)):
            return batch
        return create_batch(**where, **fields)


def record_name_encoding(*, actor: Any, batch: IntakeBatch, encoding: str) -> None:
    """Record the encoding a ZIP batch's names are read with from now on, one that renames
    nothing it has taken in (the intake pipeline checks); audited with the one it replaces."""
    with transaction.atomic():
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


def _start_time(pid: int) -> str:
    """When process ``pid`` started (clock ticks since boot, from /proc), "" where unknown:
    with its pid it names one process, not a later one given the same pid."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return ""
    fields = stat[stat.rfind(")") + 2 :].split()  # after "pid (command) "
    return fields[19] if len(fields) > 19 else ""  # field 22 of stat: starttime


def _owner() -> str:
    """Who claims a batch: this host, this process and when it started."""
    pid = os.getpid()
    start = _start_time(pid)
    return f"{socket.gethostname()}:{pid}" + (f"@{start}" if start else "")


_OWNER = re.compile(r"(?P<host>.*):(?P<pid>[0-9]+)(?:@(?P<start>[0-9]+))?")


def _owner_alive(owner: str) -> bool:
    """False only when the owner is known dead: a process of this host that is gone, or
    whose pid now belongs to a process started later (the pid was reused)."""
    match = _OWNER.fullmatch(owner)
    if match is None or match["host"] != socket.gethostname():
        return True  # another machine: trust its lease
    pid = int(match["pid"])
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    if match["start"] and (start := _start_time(pid)) and start != match["start"]:
        return False  # the pid now names another process
    return True


def owner_known_dead(owner: str) -> bool:
    """Whether a batch's claim was left by a process of this host that is no longer
    running: its batch can be taken over at once, however fresh its heartbeat."""
    match = _OWNER.fullmatch(owner)
    return match is not None and match["host"] == socket.gethostname() and not _owner_alive(owner)


def claim_batch(batch: IntakeBatch) -> bool:
    """Take the batch for this process with a conditional update; False if someone has it.

    A batch whose owner died (killed mid-way) or whose lease ran out can be taken over.
    """
    now = timezone.now()
    fresh = IntakeBatch.objects.filter(pk=batch.pk).values("claimed_by", "heartbeat_at").get()
    owner = fresh["claimed_by"]
    match = _OWNER.fullmatch(owner)
    if match is not None and match["host"] == socket.gethostname():
        # a process here holds it for as long as it lives
        held = owner != _owner() and _owner_alive(owner)
    else:  # another machine holds it while its heartbeat is fresh
        held = bool(owner) and fresh["heartbeat_at"] and fresh["heartbeat_at"] > now - LEASE
    if held:
        return False
    taken = IntakeBatch.objects.filter(
        pk=batch.pk, claimed_by=fresh["claimed_by"], heartbeat_at=fresh["heartbeat_at"]
    ).update(claimed_by=_owner(), heartbeat_at=now, status=IntakeBatch.Status.RUNNING)
    return taken == 1


def release_batch(batch: IntakeBatch) -> None:
    """Give back a batch this process claimed and will not take in after all, as it was
    before the claim (``batch`` as read then)."""
    IntakeBatch.objects.filter(pk=batch.pk, claimed_by=_owner()).update(
        claimed_by=batch.claimed_by, heartbeat_at=batch.heartbeat_at, status=batch.status
    )


def done_source_keys(batch: IntakeBatch) -> set[str]:
    return set(batch.items.values_list("source_key", flat=True))


def _lock_case_intake(case: Any) -> EvidenceCounter:
    """Take the case's intake lock (its EV- counter row) until the transaction ends."""
    counter, _ = EvidenceCounter.objects.get_or_create(case=case)
    return EvidenceCounter.objects.select_for_update().get(pk=counter.pk)


def _next_references(case: Any, n: int) -> list[str]:
    counter = _lock_case_intake(case)
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
    actor: Any,
    case: Any,
    batch: IntakeBatch | None,
    results: list[IntakeResult],
    acquired_from: str,
    method: str = "",
    medium: str = "",
    medium_serial: str = "",
) -> int:
    """Write one chunk of intake results: items, provenance, thumbnails, custody, audit.

    One transaction, a handful of statements whatever the chunk's size (rows written
    with ``insert_rows``: this is the coordinator's hot path). Returns the items written.
    """
    stored = [r for r in results if r.stored]
    if not stored:
        return 0
    now = timezone.now()
    with transaction.atomic():
        files = _stored_files(stored)
        insert_rows(
            Derivative,
            [
                dict(
                    original_id=files[r.sha256].pk,
                    kind=Derivative.Kind.THUMBNAIL,
                    storage_key=r.thumbnail.key,
                    media_type="image/jpeg",
                    width=r.thumbnail.width,
                    height=r.thumbnail.height,
                    size=r.thumbnail.size,
                    tool=TOOL,
                    parameters=r.thumbnail.parameters,
                )
                for r in stored
                if r.thumbnail
            ],
            ignore_conflicts=True,
        )
        # The counter's row lock serialises intakes into one case before "duplicate" is
        # decided, so two concurrent ingests cannot both call the same bytes new.
        references = _next_references(case, len(stored))
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
                )
            )
            in_case.add(sf.pk)
        insert_rows(EvidenceItem, rows)
        pks = dict(
            EvidenceItem.objects.filter(case=case, reference__in=references).values_list(
                "reference", "pk"
            )
        )
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
                    taken_date=taken_date(r.taken_at) if r.taken_at else None,
                    gps_latitude=Decimal(str(r.gps[0])) if r.gps else None,
                    gps_longitude=Decimal(str(r.gps[1])) if r.gps else None,
                    orientation=r.orientation,
                    width=r.width,
                    height=r.height,
                )
                for pk, r in zip(item_pks, stored, strict=True)
            ],
        )
        changed = [pk for pk, r in zip(item_pks, stored, strict=True) if r.existing == "mismatch"]
        if changed:
            _set_integrity(changed, CustodyEvent.HashResult.MISMATCH)
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
        if batch is not None:
            IntakeBatch.objects.filter(pk=batch.pk).update(heartbeat_at=timezone.now())
    return len(stored)


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


def refresh_batch_counts(batch: IntakeBatch, problems: list[dict[str, str]], total: int) -> None:
    """Counts derived from what is in the database, so they are right after any crash."""
    agg = batch.items.aggregate(
        items=Count("pk"),
        duplicate=Count("pk", filter=Q(is_duplicate=True)),
        flagged=Count("pk", filter=Q(is_flagged=True)),
    )
    failed = sum(1 for p in problems if p["kind"] == "failed")
    skipped = sum(1 for p in problems if p["kind"] == "skipped")
    IntakeBatch.objects.filter(pk=batch.pk).update(
        total=total,
        seen=agg["items"] + failed + skipped,
        stored=agg["items"] - agg["duplicate"],
        duplicate=agg["duplicate"],
        flagged=agg["flagged"],
        failed=failed,
        skipped=skipped,
        problems=problems,
        heartbeat_at=timezone.now(),
    )
    batch.refresh_from_db()


def _store_text(text: str | bytes, media_type: str) -> StoredFile:
    data = text.encode() if isinstance(text, str) else text
    written = evidence_storage().write_original([data])
    sf, _ = StoredFile.objects.get_or_create(
        sha256=written.sha256,
        defaults={"size": written.size, "media_type": media_type, "storage_key": written.key},
    )
    return sf


def finish_batch(
    *,
    actor: Any,
    batch: IntakeBatch,
    problems: list[dict[str, str]],
    total: int,
    custodian_manifest: list[tuple[str, str, str]] | None = None,
    custodian_manifest_text: str | bytes | None = None,
) -> IntakeBatch:
    """Close a run: counts, the hashed intake manifest, the custodian list check, audit."""
    with transaction.atomic():
        listed = None
        if custodian_manifest is not None:  # its mismatches are flagged: counted below
            listed = _store_text(custodian_manifest_text or "", "text/plain")
            _check_custodian_manifest(batch, custodian_manifest)
        refresh_batch_counts(batch, problems, total)
        if listed is not None:
            batch.custodian_manifest = listed
        rows = batch.items.order_by("original_path", "source_key").values_list(
            "original_path", "original__size", "original__sha256"
        )
        lines = ["# sha256\tsize\tpath (escaped in paths: \\\\ \\t \\n \\r)"]
        lines += [f"{sha}\t{size}\t{_manifest_path(path)}" for path, size, sha in rows]
        batch.manifest = _store_text("\n".join(lines) + "\n", "text/tab-separated-values")
        batch.status = IntakeBatch.Status.INCOMPLETE if batch.failed else IntakeBatch.Status.DONE
        batch.finished_at = timezone.now()
        batch.claimed_by = ""
        batch.save(
            update_fields=["manifest", "custodian_manifest", "status", "finished_at", "claimed_by"]
        )
        audit.record(
            actor,
            "evidence.batch_done",
            target=batch,
            case=batch.case,
            seen=batch.seen,
            stored=batch.stored,
            duplicate=batch.duplicate,
            flagged=batch.flagged,
            failed=batch.failed,
            manifest_sha256=batch.manifest.sha256,
        )
    return batch


_MANIFEST_ESCAPES = str.maketrans({"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"})


def _manifest_path(path: str) -> str:
    """A path on one line of the manifest: a name holding a tab or a line break can
    neither split its own row nor forge another."""
    return path.translate(_MANIFEST_ESCAPES)


def _check_custodian_manifest(batch: IntakeBatch, listed: list[tuple[str, str, str]]) -> None:
    """Each line of the custodian's list against what arrived, matched by the bytes of
    the names (a name that is not UTF-8 on the medium is recorded with escapes)."""
    ManifestEntry.objects.filter(batch=batch).delete()  # recomputed on every run
    items = {
        recorded_name_bytes(item.original_path, item.flags).removeprefix(b"./"): item
        for item in batch.items.select_related("original")
    }
    entries, mismatched = [], []
    listed_paths = set()
    for algorithm, expected, name in listed:
        key = manifest_name_bytes(name)
        listed_paths.add(key)
        path = key.decode("utf-8", "backslashreplace")  # as a database holds text
        item = items.get(key)
        if item is None:
            entries.append(
                ManifestEntry(
                    batch=batch,
                    path=path,
                    algorithm=algorithm,
                    expected=expected,
                    result=ManifestEntry.Result.MISSING,
                )
            )
            continue
        actual = getattr(item.original, algorithm)
        ok = actual == expected
        entries.append(
            ManifestEntry(
                batch=batch,
                path=item.original_path.removeprefix("./"),
                algorithm=algorithm,
                expected=expected,
                actual=actual,
                item=item,
                result="match" if ok else "mismatch",
            )
        )
        if not ok:
            mismatched.append((item, algorithm, expected, actual))
    for key, item in items.items():
        if key not in listed_paths:
            entries.append(
                ManifestEntry(
                    batch=batch,
                    path=item.original_path.removeprefix("./"),
                    algorithm="",
                    actual=item.original.sha256,
                    item=item,
                    result=ManifestEntry.Result.UNLISTED,
                )
            )
    ManifestEntry.objects.bulk_create(entries)
    for item, algorithm, expected, actual in mismatched:
        if not any(f["code"] == "manifest_mismatch" for f in item.flags):
            item.flags = [
                *item.flags,
                {
                    "code": "manifest_mismatch",
                    "reason": f"custodian's {algorithm} {expected}, "
                    f"received {actual or 'not computed'}",
                },
            ]
            item.is_flagged = True
            item.save(update_fields=["flags", "is_flagged"])


# -- custody and fixity -----------------------------------------------------------------
def _rehash(sf: StoredFile) -> tuple[str | None, str]:
    """(the SHA-256 of the stored bytes, "") or (None, why they cannot be read)."""
    path = evidence_storage().path(sf.storage_key)
    digest = hashlib.sha256()
    try:
        with Path(path).open("rb") as fh:
            while chunk := fh.read(1 << 20):
                digest.update(chunk)
    except FileNotFoundError:
        return None, "not found in the store"
    except OSError as exc:  # a disk error, a permission, a directory at the key
        return None, f"unreadable: {exc.strerror or exc}"
    return digest.hexdigest(), ""


_INTEGRITY = {
    CustodyEvent.HashResult.MATCH: EvidenceItem.Integrity.VERIFIED,
    CustodyEvent.HashResult.MISMATCH: EvidenceItem.Integrity.CHANGED,
    CustodyEvent.HashResult.MISSING: EvidenceItem.Integrity.MISSING,
}


def record_identification(*, actor: Any, item: EvidenceItem, **fields: Any):
    """A witness identifies a person in an item; both must belong to the item's case."""
    from people.models import CaseRole

    from .models import Identification

    people = {fields["witness"].pk, fields["identified"].pk}
    in_case = set(
        CaseRole.objects.filter(case=item.case, person__in=people).values_list(
            "person_id", flat=True
        )
    )
    if in_case != people:
        raise ValueError("Both people must have a role in the item's case.")
    with transaction.atomic():
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


def update_item(*, actor: Any, item: EvidenceItem, tags: list[str], **fields: Any) -> None:
    """Change what is stated about an item (never its file or extracted metadata)."""
    from .models import Tag

    changes = {
        name: [str(getattr(item, name) or ""), str(value or "")]
        for name, value in fields.items()
        if getattr(item, name) != value
    }
    before = sorted(item.tags.values_list("name", flat=True))
    if before != tags:
        changes["tags"] = [before, tags]
    if not changes:
        return
    with transaction.atomic():
        for name, value in fields.items():
            setattr(item, name, value)
        item.save(update_fields=list(fields))
        for name in tags:
            Tag.objects.get_or_create(case=item.case, name=name)
        item.tags.set(Tag.objects.filter(case=item.case, name__in=tags))
        audit.record(actor, "evidence.update", target=item, case=item.case, changes=changes)


def ensure_preview(item: EvidenceItem) -> Derivative | None:
    """The ~1024 px preview, made on first view (never during intake)."""
    from .intake.steps import DECODABLE, PREVIEW_SIZE, make_preview
    from .storage import derivative_key

    if item.original.media_type not in DECODABLE:
        return None
    try:
        data, width, height = make_preview(evidence_storage().path(item.original.storage_key))
    except Exception:
        return None
    key = derivative_key(item.original.sha256, "preview", "jpg")
    evidence_storage().write_derivative(key, data)
    params = {"max": PREVIEW_SIZE, "quality": 85, "resample": "bicubic", "exif_transpose": True}
    _record_derivative(item, Derivative.Kind.PREVIEW, key, _Picture(data, width, height), params)
    return Derivative.objects.get(original=item.original, kind=Derivative.Kind.PREVIEW)


def _record_derivative(
    item: EvidenceItem, kind: str, key: str, picture: _Picture, params: dict[str, Any]
) -> None:
    """The row of a derivative just written (a JPEG), unless another request wrote it."""
    Derivative.objects.bulk_create(
        [
            Derivative(
                original=item.original,
                kind=kind,
                storage_key=key,
                media_type="image/jpeg",
                width=picture.width,
                height=picture.height,
                size=len(picture.data),
                tool=TOOL,
                parameters=params,
            )
        ],
        ignore_conflicts=True,
    )


def remake_thumbnail(item: EvidenceItem, derivative: Derivative) -> bytes | None:
    """The thumbnail made again from the verified original, as its row says it was made
    (a crash can leave the row without its file); None if the original cannot give one.

    Only the file is written: the row already describes it.
    """
    made = _thumbnail_from_original(item, derivative.parameters or {})
    if made is None:
        return None
    try:
        evidence_storage().write_derivative(derivative.storage_key, made.data)
    except OSError:
        pass  # served all the same; the next view tries again
    return made.data


def make_missing_thumbnails(*, case: Any = None) -> tuple[int, list[EvidenceItem]]:
    """Thumbnails of the pictures whose thumbnail could not be stored at intake (flagged
    ``derivative_failed``: a full disk, say), made from their verified originals as at
    intake, once per stored file. Returns how many were made and the items still without
    one. The flag stays: it records what happened at intake."""
    from .intake.steps import DECODABLE, THUMBNAIL_PARAMETERS
    from .storage import derivative_key

    items = (
        EvidenceItem.objects.select_related("original")
        .filter(original__media_type__in=DECODABLE)
        .exclude(original__derivatives__kind=Derivative.Kind.THUMBNAIL)
        .order_by("pk")
    )
    if case is not None:
        items = items.filter(case=case)
    made: set[int] = set()
    failed: set[int] = set()
    left: list[EvidenceItem] = []
    for item in items.iterator(chunk_size=500):
        if item.original_id in made or not any(
            f.get("code") == "derivative_failed" for f in item.flags
        ):
            continue  # a duplicate of one just made, or a picture that cannot give one
        if item.original_id in failed:
            left.append(item)  # the same bytes as one that failed: not read again
            continue
        thumb = _thumbnail_from_original(item, THUMBNAIL_PARAMETERS)
        key = derivative_key(item.original.sha256, "thumbnail", "jpg")
        try:
            if thumb is None:
                raise OSError("the original cannot give one")
            evidence_storage().write_derivative(key, thumb.data)
        except OSError:
            failed.add(item.original_id)
            left.append(item)
            continue
        _record_derivative(item, Derivative.Kind.THUMBNAIL, key, thumb, dict(THUMBNAIL_PARAMETERS))
        made.add(item.original_id)
    return len(made), left


class _Picture(NamedTuple):
    data: bytes
    width: int
    height: int


def _thumbnail_from_original(item: EvidenceItem, params: dict[str, Any]) -> _Picture | None:
    """A thumbnail made from the verified original with these parameters; None if the
    original is missing, changed or cannot be decoded."""
    import warnings

    from PIL import Image

    from .intake.steps import (
        MAX_PIXELS,
        PIL_FORMATS,
        THUMBNAIL_QUALITY,
        THUMBNAIL_SIZE,
        encode_jpeg,
        make_reduced,
        valid_orientation,
    )

    fh, _ = open_verified(item)
    if fh is None:
        return None  # missing or changed: the fixity sweep records it, nothing is remade
    try:
        with fh, warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            img = Image.open(fh, formats=PIL_FORMATS)
            if img.width * img.height > MAX_PIXELS:
                return None
            orientation = None
            if params.get("exif_transpose", True):
                try:
                    orientation = img.getexif().get(274)
                except Exception:  # unreadable EXIF: made without turning, as at intake
                    orientation = None
            thumb = make_reduced(
                img,
                int(params.get("max", THUMBNAIL_SIZE)),
                valid_orientation(orientation),
                Image.Resampling[str(params.get("resample", "box")).upper()],
            )
            data = encode_jpeg(thumb, int(params.get("quality", THUMBNAIL_QUALITY)))
    except Exception:
        return None
    return _Picture(data, thumb.width, thumb.height)


def open_verified(item: EvidenceItem):
    """Open the original and re-hash it through that same open file.

    Returns (the file, rewound, or None, and the result): the bytes served are the bytes
    just verified, never a second open of a path that could have changed in between.
    """
    try:
        fh = Path(evidence_storage().path(item.original.storage_key)).open("rb")
    except OSError:  # gone, or unreadable: it cannot be produced either way
        return None, CustodyEvent.HashResult.MISSING
    digest = hashlib.sha256()
    try:
        while chunk := fh.read(1 << 20):
            digest.update(chunk)
        fh.seek(0)
    except OSError:
        fh.close()
        return None, CustodyEvent.HashResult.MISSING
    if digest.hexdigest() != item.original.sha256:
        fh.close()
        return None, CustodyEvent.HashResult.MISMATCH
    return fh, CustodyEvent.HashResult.MATCH


def record_download(
    *, actor: Any, item: EvidenceItem, result: str, purpose: str = "download"
) -> str:
    """A copy of the original leaves the server (or was refused): custody event, audit."""
    served = result == CustodyEvent.HashResult.MATCH
    with transaction.atomic():
        _set_integrity([item.pk], result)
        record_custody(
            [
                dict(
                    case_id=item.case_id,
                    item_id=item.pk,
                    action=CustodyEvent.Action.COPIED if served else CustodyEvent.Action.ACCESSED,
                    at=timezone.now(),
                    actor_id=actor.pk,
                    to_custodian=actor.get_username() if served else "",
                    purpose=(
                        purpose if served else f"{purpose} refused: the original failed its check"
                    ),
                    sha256=item.original.sha256,
                    hash_result=result,
                )
            ],
            actor=actor,
            action="evidence.download" if served else "evidence.download_refused",
            target=item,
            case=item.case,
            hash_result=result,
        )
    return result


# What a person records of an item's custody by hand; the rest the app records itself.
RECORDABLE_CUSTODY = (
    CustodyEvent.Action.TRANSFERRED,
    CustodyEvent.Action.RETURNED,
    CustodyEvent.Action.ANALYSED,
    CustodyEvent.Action.STORED,
)


def record_custody_event(
    *,
    actor: Any,
    item: EvidenceItem,
    action: str,
    at: Any = None,
    from_custodian: str = "",
    to_custodian: str = "",
    location: str = "",
    purpose: str = "",
    notes: str = "",
) -> CustodyEvent:
    """A hand-over, return, analysis or storage move of an item, as a person states it.

    The original is re-hashed at the moment of recording and the event keeps what was
    found: a changed or missing original is recorded as such and marks the item, loudly;
    nothing is ever "fixed". The event and its audit entry commit together.
    """
    if action not in RECORDABLE_CUSTODY:
        raise ValueError(f"{action!r} is recorded by the app itself, not by hand.")
    actual, unreadable = _rehash(item.original)
    if actual is None:
        result, found = CustodyEvent.HashResult.MISSING, unreadable
    elif actual != item.original.sha256:
        result, found = CustodyEvent.HashResult.MISMATCH, f"found sha256 {actual}"
    else:
        result, found = CustodyEvent.HashResult.MATCH, ""
    with transaction.atomic(durable=True):
        _set_integrity([item.pk], result)
        (pk,) = record_custody(
            [
                dict(
                    case_id=item.case_id,
                    item_id=item.pk,
                    action=action,
                    at=at or timezone.now(),
                    actor_id=actor.pk,
                    from_custodian=from_custodian,
                    to_custodian=to_custodian,
                    location=location,
                    purpose=purpose,
                    sha256=item.original.sha256,
                    hash_result=result,
                    notes="\n".join(n for n in (notes, found) if n),
                )
            ],
            actor=actor,
            action="evidence.custody",
            target=item,
            case=item.case,
            custody_action=action,
            hash_result=result,
            found=found,
        )
    return CustodyEvent.objects.get(pk=pk)


def _set_integrity(item_pks: Iterable[int], result: str) -> None:
    EvidenceItem.objects.filter(pk__in=list(item_pks)).update(
        integrity=_INTEGRITY[result], integrity_checked_at=timezone.now()
    )


def run_fixity(*, actor: Any = None, case: Any = None, progress=None):
    """Re-hash every stored original (of a case, or all); record what was found."""
    from .models import FixityCheck

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
            (batch.manifest, "intake manifest"),
            (batch.custodian_manifest, "custodian's checksum list"),
        ):
            if sf is not None:
                records.setdefault(sf.pk, []).append((batch, what))
                files.setdefault(sf.pk, sf)
                by_file.setdefault(sf.pk, [])
    check = FixityCheck.objects.create(case=case, started_at=timezone.now(), actor=actor)
    changed, missing, ok = [], [], 0
    pending: list[tuple[list[EvidenceItem], str, str]] = []
    batch_events: list[CustodyEvent] = []
    for n, (file_id, sf) in enumerate(files.items(), 1):
        actual, unreadable = _rehash(sf)
        if actual is None:
            result, note = CustodyEvent.HashResult.MISSING, unreadable
            missing.append(sf.sha256)
        elif actual != sf.sha256:
            result, note = CustodyEvent.HashResult.MISMATCH, f"found sha256 {actual}"
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
    with transaction.atomic():
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
    with transaction.atomic():
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
            _set_integrity([i.pk for i in items], result)
        # Each chunk's events are bound by an entry of their own: a sweep of a large
        # archive is many transactions, and none leaves a custody row unbound.
        record_custody(
            events,
            actor=actor,
            action="evidence.fixity_results",
            target=check,
            case=check.case,
            events=len(events),
        )


def verify_custody(case: Any) -> list[str]:
    """Problems with a case's custody records: each item acquired once, at intake first."""
    problems = []
    counts = (
        EvidenceItem.objects.filter(case=case)
        .annotate(acq=Count("custody_events", filter=Q(custody_events__action="acquired")))
        .exclude(acq=1)
        .values_list("reference", "acq")
    )
    problems += [f"{ref}: {n} 'acquired' events" for ref, n in counts]
    bad_hash = (
        CustodyEvent.objects.filter(case=case, item__isnull=False)
        .exclude(sha256=F("item__original__sha256"))
        .exclude(sha256="")
    )
    problems += [f"event {e.pk}: hash differs from the original's" for e in bad_hash]
    return problems
