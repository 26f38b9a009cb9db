"""Custody of items: downloads, hand-overs recorded by hand, originals re-hashed."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from django.db import transaction
from django.db.models import Count, F, Q
from django.utils import timezone

from ..custody_events import record_custody
from ..models import (
    CustodyEvent,
    EvidenceItem,
    StoredFile,
)
from ..storage import evidence_storage
from .words import NOTE_FOUND, NOTE_NOT_IN_STORE, NOTE_UNREADABLE

if TYPE_CHECKING:
    from django.contrib.auth.models import User as Account

    from casefiles.models import Case


# -- custody and fixity -----------------------------------------------------------------
def rehash(sf: StoredFile) -> tuple[str | None, str]:
    """(the SHA-256 of the stored bytes, "") or (None, why they cannot be read)."""
    digest = hashlib.sha256()
    try:
        with evidence_storage().open(sf.storage_key) as fh:
            while chunk := fh.read(1 << 20):
                digest.update(chunk)
    except FileNotFoundError:
        return None, NOTE_NOT_IN_STORE
    except OSError as exc:  # a disk error, a permission, a directory at the key
        return None, NOTE_UNREADABLE % {"error": exc.strerror or exc}
    return digest.hexdigest(), ""


_INTEGRITY: dict[str, str] = {
    CustodyEvent.HashResult.MATCH: EvidenceItem.Integrity.VERIFIED,
    CustodyEvent.HashResult.MISMATCH: EvidenceItem.Integrity.CHANGED,
    CustodyEvent.HashResult.MISSING: EvidenceItem.Integrity.MISSING,
}


def open_verified(item: EvidenceItem):
    """Open the original and re-hash it through that same open file.

    Returns (the file, rewound, or None, and the result): the bytes served are the bytes
    just verified, never a second open of a path that could have changed in between.
    """
    try:
        fh = evidence_storage().open(item.original.storage_key)
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
    *, actor: Account, item: EvidenceItem, result: str, purpose: str = "download"
) -> str:
    """A copy of the original leaves the server (or was refused): custody event, audit."""
    served = result == CustodyEvent.HashResult.MATCH
    with transaction.atomic(durable=True):
        set_integrity([item.pk], result)
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
    actor: Account,
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
    actual, unreadable = rehash(item.original)
    if actual is None:
        result, found = CustodyEvent.HashResult.MISSING, unreadable
    elif actual != item.original.sha256:
        result, found = CustodyEvent.HashResult.MISMATCH, NOTE_FOUND % {"sha256": actual}
    else:
        result, found = CustodyEvent.HashResult.MATCH, ""
    with transaction.atomic(durable=True):
        set_integrity([item.pk], result)
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


def set_integrity(item_pks: Iterable[int], result: str) -> None:
    EvidenceItem.objects.filter(pk__in=list(item_pks)).update(
        integrity=_INTEGRITY[result], integrity_checked_at=timezone.now()
    )


def verify_custody(case: Case) -> list[str]:
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
