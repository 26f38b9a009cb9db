"""Closing a batch: its hashed intake manifest, and the custodian's list checked."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.db import transaction
from django.utils import timezone

from casefiles import audit

from ..intake.sources import manifest_name_bytes, recorded_name_bytes
from ..models import (
    IntakeBatch,
    ManifestEntry,
    StoredFile,
)
from ..storage import evidence_storage
from .intake_rows import refresh_batch_counts

if TYPE_CHECKING:
    from django.contrib.auth.models import User as Account


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
    actor: Account,
    batch: IntakeBatch,
    problems: list[dict[str, str]],
    total: int,
    custodian_manifest: list[tuple[str, str, str]] | None = None,
    custodian_manifest_text: str | bytes | None = None,
) -> IntakeBatch:
    """Close a run: counts, the hashed intake manifest, the custodian list check, audit."""
    with transaction.atomic(durable=True):
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
