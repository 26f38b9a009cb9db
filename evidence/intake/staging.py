"""Browser uploads are staged on the store's filesystem, then taken in like a medium."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

from ..storage import evidence_storage
from .payload import SourceFile
from .sources import Listing, is_archive, list_zip

PREFIX = "upload:"
SMALL_BYTES = 64 << 20  # more than this goes to the task worker, not the web request


def staging_dir(batch) -> Path:
    return evidence_storage().scratch_dir(str(batch.pk))


def upload_sha256(upload) -> tuple[str, int]:
    """The SHA-256 and size of one upload as handed over, as ``ingest`` takes a single
    file's or archive's own hash onto the batch and the medium's custody event."""
    digest, size = hashlib.sha256(), 0
    for chunk in upload.chunks():
        digest.update(chunk)
        size += len(chunk)
    return digest.hexdigest(), size


def stage_uploads(batch, uploads) -> int:
    """Copy uploaded files to the batch's staging folder; returns how many."""
    directory = staging_dir(batch)
    directory.mkdir(parents=True, exist_ok=True)
    names = []
    for n, upload in enumerate(uploads):
        with (directory / f"{n:06d}").open("wb") as out:
            for chunk in upload.chunks():
                out.write(chunk)
        names.append(upload.name)
    (directory / "names.json").write_text(json.dumps(names, ensure_ascii=False))
    return len(names)


CUSTODIAN_LIST = "custodian-list"  # beside the uploads, never taken in as one of them


def stage_custodian_list(batch, data: bytes) -> Path:
    """The custodian's checksum list handed over with an upload, kept with the staged
    files until the batch is done (a resumed batch checks against it too)."""
    directory = staging_dir(batch)
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / CUSTODIAN_LIST
    path.write_bytes(data)
    return path


def custodian_list_for(batch) -> Path | None:
    """The custodian's list staged with the batch's uploads, if one was."""
    path = staging_dir(batch) / CUSTODIAN_LIST
    return path if path.is_file() else None


def listing_for(batch) -> Listing:
    """Every staged file as a source, taken in whole as uploaded; a .zip archive also
    contributes its members, under its name (``Archive.zip#2/`` for the second upload
    of that name, so each member keeps its own source key), its names read with the
    batch's encoding, if the upload named one."""
    directory = staging_dir(batch)
    names = json.loads((directory / "names.json").read_text())
    listing = Listing()
    for n, name in enumerate(names):
        path = directory / f"{n:06d}"
        occurrence = names[:n].count(name)
        listing.files.append(SourceFile(path=name, occurrence=occurrence, fs_path=str(path)))
        if not is_archive(name, path):
            continue
        prefix = f"{name}#{occurrence + 1}" if occurrence else name
        try:
            inner = list_zip(path, evidence_storage().free_space(), batch.name_encoding or None)
        except Exception as exc:  # a bomb or an unreadable ZIP: the archive itself is kept
            reason = f"members not taken in: {type(exc).__name__}: {exc}"
            listing.problem(f"{prefix}/", "failed", reason)
            continue
        listing.files += [
            SourceFile(**{**vars(s), "path": f"{prefix}/{s.path}"}) for s in inner.files
        ]
        listing.problems += [{**p, "path": f"{prefix}/{p['path']}"} for p in inner.problems]
    return listing


def clear_staging(batch) -> None:
    """Staged copies go once every file is in the store, or once what is not could never
    be: each upload itself is stored, and what failed was refused by the listing (a ZIP
    bomb, an unreadable archive, a member over the limits), which a resume would only
    refuse again. Kept while anything failed that a resume may still take in."""
    batch.refresh_from_db(fields=["failed", "status", "problems"])
    if batch.status not in (batch.Status.DONE, batch.Status.INCOMPLETE):
        return
    if batch.failed and not _only_refusals_left(batch):
        return
    shutil.rmtree(staging_dir(batch), ignore_errors=True)


def _only_refusals_left(batch) -> bool:
    try:
        listing = listing_for(batch)
    except OSError:
        return False
    refused = [p for p in listing.problems if p["kind"] == "failed"]
    failed = [p for p in batch.problems if p["kind"] == "failed"]
    if any(p not in refused for p in failed):
        return False  # an upload or a member could not be stored: a resume may
    uploads = {s.key for s in listing.files if s.zip_path is None}
    done = set(batch.items.filter(source_key__in=uploads).values_list("source_key", flat=True))
    return done == uploads


def is_small(uploads) -> bool:
    """Few plain files are taken in at once; many, or any ZIP, go to a background task."""
    return (
        len(uploads) <= 10
        and sum(u.size for u in uploads) <= SMALL_BYTES
        and not any(u.name.lower().endswith(".zip") for u in uploads)
    )
