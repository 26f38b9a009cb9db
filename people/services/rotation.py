"""Re-encrypting every sealed column (``people.sealed``) under the current field key."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from django.db import transaction

from casefiles import audit, bindings

from .. import crypto, sealed

if TYPE_CHECKING:
    from django.contrib.auth.models import User as Account


@dataclass(frozen=True)
class RotationReport:
    rows: dict[str, int]  # model label -> rows sealed again
    reencrypted: int  # rows that held a value under an older key (or none yet)
    key_id: str
    chunks: int

    @property
    def people(self) -> int:
        return self.rows.get("people.Person", 0)


def _check_all_open(entry: sealed.SealedColumns, batch_size: int) -> None:
    """Open every value of ``entry`` before anything is written: a value no configured
    key opens stops the rotation while nothing has changed."""
    rows = entry.model._base_manager.only("pk", *entry.columns).order_by("pk")
    for row in rows.iterator(chunk_size=batch_size):
        for column in entry.columns:
            entry.open(row, column)


def _stale(entry: sealed.SealedColumns, row: Any, key_id: str) -> bool:
    return any(
        not stored or crypto.key_id_of(stored) != key_id
        for stored in (getattr(row, c) for c in entry.columns)
    )


def _rebinds(entry: sealed.SealedColumns) -> bool:
    """Whether sealing ``entry``'s rows again changes the state the chain binds of them
    (a tracked model whose bound columns include sealed ones: the antemortem profile)."""
    return bindings.tracked(entry.model) and bool(
        set(entry.columns) & set(bindings.columns_of(entry.model))
    )


def _rotate_chunk(
    entry: sealed.SealedColumns, after: Any, key_id: str, batch_size: int, actor: Account | None
) -> tuple[int, int, Any]:
    """Seal again the next ``batch_size`` rows after primary key ``after``: one durable
    transaction with its audit entry. Returns (rows, re-encrypted, last primary key)."""
    manager = entry.model._base_manager
    with transaction.atomic(durable=True):
        rows = manager.select_for_update().order_by("pk")
        if after is not None:
            rows = rows.filter(pk__gt=after)
        chunk = list(rows[:batch_size])
        if not chunk:
            return 0, 0, None
        reencrypted = 0
        for row in chunk:
            values = {c: entry.open(row, c) for c in entry.columns}
            reencrypted += _stale(entry, row, key_id)
            for column, value in values.items():
                entry.seal(row, column, value)
        manager.bulk_update(chunk, entry.columns)
        if entry.resealed is not None:
            for row in chunk:
                entry.resealed(row)
        audit.record(
            actor,
            "people.reseal",
            binds={entry.model: [r.pk for r in chunk]} if _rebinds(entry) else None,
            key_id=key_id,
            model=entry.label,
            rows=len(chunk),
            reencrypted=reencrypted,
        )
    return len(chunk), reencrypted, chunk[-1].pk


def rotate_field_keys(*, actor: Account | None = None, batch_size: int = 200) -> RotationReport:
    """Re-encrypt every registered sealed column of every row under the current key.

    First every value is opened (with whichever configured key sealed it): if one does
    not open, ``crypto.DecryptionError`` is raised and nothing has changed. Then the rows
    are sealed again in chunks of ``batch_size``, each chunk one durable transaction with
    its audit entry (``people.reseal``), so a long rotation holds no lock for long and one
    stopped halfway keeps what it finished: running it again completes it (every row is
    sealed again each time, which also rebuilds people's name index). The rotation ends
    with one ``people.rotate_keys`` entry, which search follows to key every name again.
    Afterwards the old keys can be removed from ATHAR_FIELD_KEYS.
    """
    key_id = crypto.current_key_id()
    entries = sealed.registered()
    for entry in entries:
        _check_all_open(entry, batch_size)
    rows: dict[str, int] = {}
    reencrypted = chunks = 0
    for entry in entries:
        rows[entry.label] = 0
        after = None
        while True:
            done, stale, after = _rotate_chunk(entry, after, key_id, batch_size, actor)
            if not done:
                break
            rows[entry.label] += done
            reencrypted += stale
            chunks += 1
    with transaction.atomic(durable=True):
        audit.record(
            actor,
            "people.rotate_keys",
            key_id=key_id,
            rows=rows,
            reencrypted=reencrypted,
            chunks=chunks,
        )
    return RotationReport(rows, reencrypted, key_id, chunks)
