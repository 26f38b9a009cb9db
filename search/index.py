"""Keeping the index current: ``follow`` refreshes what an audited write changed, in the
same transaction; ``reindex`` rebuilds it from the records (``manage.py reindex``)."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator
from itertools import islice
from typing import TYPE_CHECKING, Any

from django.db import transaction

from casefiles.bulk import insert_rows

from . import kinds as registry
from .models import Entry
from .normalise import normalise
from .text import words

if TYPE_CHECKING:
    from casefiles.models import AuditEntry

    from .kinds import Document, Kind

CHUNK = 2000


def row_of(kind: Kind, doc: Document) -> dict[str, Any]:
    """The index's row of one document (as ``insert_rows`` takes it)."""
    return dict(
        case_id=doc.case_id,
        kind=kind.name,
        key=doc.key,
        reference=doc.reference[:64],
        title=doc.title[:300],
        body=doc.body,
        words=" ".join(words(f"{doc.reference}\n{doc.title}\n{doc.body}\n{doc.extra}")),
        short=normalise(" | ".join(s for s in (doc.reference, *doc.short) if s)),
        guard=doc.guard,
        at=doc.at,
    )


def entry_of(kind: Kind, doc: Document) -> Entry:
    return Entry(**row_of(kind, doc))


def refresh(kind: Kind, keys: Collection[str]) -> None:
    """Index these records of ``kind`` again as they are now (inside the caller's
    transaction); a record gone, or no longer indexed, leaves the index. The new rows in
    one statement (``insert_rows``: an audited write's hot path, intake's among them)."""
    keys = sorted(set(keys))
    if not keys:
        return
    Entry.objects.filter(kind=kind.name, key__in=keys).delete()
    insert_rows(Entry, [row_of(kind, d) for d in kind.documents(keys, None)])


def follow(entry: AuditEntry) -> None:
    """``casefiles.audit.follow``'s hook: the records this entry's write changed."""
    for kind in registry.kinds():
        how = kind.follows.get(entry.action)
        if how is not None:
            refresh(kind, list(how(entry)))


def _chunks(docs: Iterator[Document]) -> Iterator[list[Document]]:
    while chunk := list(islice(docs, CHUNK)):
        yield chunk


def reindex(case_id: int | None = None, names: Iterable[str] | None = None) -> dict[str, int]:
    """Rebuild the index of every kind (or those named), of one case or all; each kind
    in its own transaction. Returns the entries written per kind."""
    written: dict[str, int] = {}
    chosen = set(names) if names is not None else None
    for kind in registry.kinds():
        if chosen is not None and kind.name not in chosen:
            continue
        with transaction.atomic():
            gone = Entry.objects.filter(kind=kind.name)
            if case_id is not None:
                gone = gone.filter(case_id=case_id)
            gone.delete()
            count = 0
            for chunk in _chunks(kind.documents(None, case_id)):
                Entry.objects.bulk_create([entry_of(kind, d) for d in chunk], CHUNK)
                count += len(chunk)
        written[kind.name] = count
    return written
