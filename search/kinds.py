"""The kinds of record the index holds: adding one is one ``register(Kind(...))``.

A kind says how to read its rows as ``Document``s (for some keys, or all of a case), after
which audited writes to refresh them (``follows``: an audit action -> the keys it changed),
where a result links to, and whether a protected statement guards it. The index
(``search.index``) follows the audit log: ``casefiles.audit.follow`` calls it with each
entry appended, inside the transaction of the write the entry records.

Apps above search register their kinds from their own ``ready()``; the kinds of the apps
below it (evidence, people, legal) are declared by search itself (``search.declared``).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from django.utils.functional import Promise

    from casefiles.models import AuditEntry

    from .models import Entry


@dataclass(frozen=True)
class Document:
    """One record as the index holds it, in one case."""

    case_id: int
    key: str
    reference: str
    title: str = ""
    body: str = ""  # shown as a snippet around the words found
    extra: str = ""  # matched as words, not shown (tags, notes, labels)
    short: tuple[str, ...] = ()  # matched inside words too: codes, file names, cameras
    guard: int | None = None  # the testimony whose statement decides who sees it
    at: datetime | None = None


# The keys (primary keys, as text) an audit entry says were written; None: not this kind's.
Follow = Callable[["AuditEntry"], Iterable[str]]


@dataclass(frozen=True)
class Kind:
    name: str
    label: str | Promise  # the heading of its group of results, plural
    # The documents of these keys (None: all), in this case (None: every case).
    documents: Callable[[Collection[str] | None, int | None], Iterator[Document]]
    url: Callable[[Entry], str]
    follows: Mapping[str, Follow] = field(default_factory=dict)
    # A statement may withhold it (``people.protection.withheld_testimonies``).
    guarded: bool = False


_KINDS: dict[str, Kind] = {}


def register(kind: Kind) -> Kind:
    """Add a kind of record to the index (once per name)."""
    if kind.name in _KINDS and _KINDS[kind.name] is not kind:
        raise ValueError(f"search kind {kind.name!r} is registered twice")
    _KINDS[kind.name] = kind
    return kind


def kinds() -> list[Kind]:
    return list(_KINDS.values())


def target_of(model_label: str) -> Follow:
    """The entry's target, when it is a row of ``model_label`` ("app.model")."""

    def keys(entry: AuditEntry) -> Iterator[str]:
        if entry.target_type == model_label and entry.target_id:
            yield entry.target_id

    return keys
