"""Append-only rows bound into the audit chain, and the check that they are all still there.

A model whose rows are never changed (custody events, testimony versions, review decisions,
consent records, protection changes) declares ``chain_bound = True``. Every service that
writes such rows names them to ``audit.record(..., binds={Model: [pk, ...]})``; the entry's
details then carry, under ``"bound"``, each row's *content hash*::

    "bound": {"evidence_custodyevent": {"columns": ["action", "at", ...],
                                        "rows": {"1734": "<sha256 hex>", ...}}}

The content hash of a row is the SHA-256 of the canonical JSON (sorted keys, no
whitespace, UTF-8) of ``{column: value}`` over the listed columns (every column of the
table when the row was written, its primary key included), values as JSON: datetimes in
UTC ISO 8601 with microseconds, dates ISO, UUIDs and decimals as strings. It is computed
from the row as read back from the database in the writing transaction, and recomputed
the same way by ``BindingCheck`` when ``verify_audit`` walks the chain. Naming the
columns in the entry keeps old bindings checkable after a later migration adds a column.

``BindingCheck`` is fed the entries of the chain in ``seq`` order and reads each bound
table in primary-key order, in chunks, a merge of the two streams: memory holds only
rows and bindings that have not met yet (rows are written in the same transaction as
their entry, so the two orders stay close). What is left at the end is named: a bound row
that is gone (deleted), a row whose content no longer matches its bound hash (altered),
a row no entry binds (written behind the app's back).

A model whose rows *are* changed, but only by the app (a victim's details on
``people.Person``, the sealed antemortem profile), declares ``chain_tracked``: the columns
its bindings cover (``"__all__"``: every column). Every write of those columns binds the
row's new state, so a row may be bound many times; ``BindingCheck`` compares each row with
its latest binding (memory holds one binding per row of such tables, as many as there are
people or profiles) and names it ``ALTERED`` when they differ, ``UNBOUND`` when none binds
it, ``MISSING`` when a bound row is gone.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from decimal import Decimal
from typing import Any
from uuid import UUID

from django.apps import apps
from django.db import connection, transaction
from django.db.models import Max, Model

BOUND = "bound"
_IN_CLAUSE = 2000  # primary keys per query when reading rows back
MAX_LISTED = 1000  # problems kept by name; the rest are counted


ALL_COLUMNS = "__all__"


def bound_models() -> list[type[Model]]:
    """Every installed model whose rows the chain binds (append-only or tracked)."""
    return sorted(
        (m for m in apps.get_models() if getattr(m, "chain_bound", False) or tracked(m)),
        key=lambda m: m._meta.db_table,
    )


def tracked(model: type[Model]) -> bool:
    """Whether the chain binds the latest state of ``model``'s rows (``chain_tracked``)."""
    return bool(getattr(model, "chain_tracked", ()))


def _plain(value: Any) -> Any:
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, datetime):
        return value.astimezone(UTC).isoformat(timespec="microseconds")
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, UUID | Decimal):
        return str(value)
    if isinstance(value, list | dict):
        return value  # JSON columns, as read back
    raise TypeError(f"No canonical form for a {type(value).__name__} column value")


def row_hash(values: Mapping[str, Any]) -> str:
    """The content hash of one row, from its ``{column: value}`` as read from the database."""
    doc = {name: _plain(v) for name, v in values.items()}
    blob = json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(blob.encode()).hexdigest()


def columns_of(model: type[Model]) -> list[str]:
    """The columns a binding covers, by attribute name (``case_id``): all of them, or
    those a tracked model names (``chain_tracked``, its primary key among them)."""
    every = sorted(f.attname for f in model._meta.concrete_fields)
    named = getattr(model, "chain_tracked", ())
    if not named or named == ALL_COLUMNS:
        return every
    unknown = set(named) - set(every)
    if unknown or model._meta.pk.attname not in named:
        raise TypeError(f"{model._meta.label}.chain_tracked: not its columns: {sorted(unknown)}")
    return sorted(named)


def hashes_of(
    model: type[Model],
    pks: Iterable[Any],
    using: str | None = None,
    columns: list[str] | None = None,
) -> dict[str, str]:
    """``{str(pk): content hash}`` of these rows over ``columns`` (default
    ``columns_of``), read back (one query per 2,000)."""
    pks = list(pks)
    manager = model._base_manager.db_manager(using)
    columns = sorted(columns) if columns else columns_of(model)
    pk_name = model._meta.pk.attname
    found: dict[str, str] = {}
    for i in range(0, len(pks), _IN_CLAUSE):
        rows = manager.filter(pk__in=pks[i : i + _IN_CLAUSE]).values_list(*columns)
        for row in rows:
            values = dict(zip(columns, row, strict=True))
            found[str(values[pk_name])] = row_hash(values)
    if len(found) != len(set(map(str, pks))):
        raise LookupError(f"{model._meta.label}: rows to bind are not in the database")
    return found


def binding(binds: Mapping[type[Model], Iterable[Any]]) -> dict[str, Any]:
    """The ``"bound"`` value of an entry binding these rows (empty lists left out)."""
    out = {}
    for model, pks in binds.items():
        if not (getattr(model, "chain_bound", False) or tracked(model)):
            raise TypeError(f"{model._meta.label} is not bound into the audit chain")
        if rows := hashes_of(model, pks):
            out[model._meta.db_table] = {"columns": columns_of(model), "rows": rows}
    return out


# -- rows written before binding existed ----------------------------------------------
EXISTING_NOTE = (
    "rows written before the audit chain bound them, bound as they stood when the "
    "binding was introduced: the chain proves them unchanged since this entry, not before"
)


def bind_existing(
    app_label: str,
    *model_names: str,
    chunk: int = 2000,
    columns: Mapping[str, list[str]] | None = None,
    note: str = EXISTING_NOTE,
):
    """A data migration's function: bind the rows already in these tables.

    One entry (``audit.bind_existing``, by the system) per ``chunk`` rows, in primary-key
    order. Uses the migration's historical models; hashes rows as ``hashes_of`` does, over
    every column, or over ``columns[model_name]`` (a tracked model's, frozen in the
    migration: historical models do not carry ``chain_tracked``).
    """

    def run(apps, schema_editor) -> None:
        conn = schema_editor.connection
        for name in model_names:
            model = apps.get_model(app_label, name)
            pks = list(
                model._base_manager.db_manager(conn.alias)
                .order_by("pk")
                .values_list("pk", flat=True)
            )
            for i in range(0, len(pks), chunk):
                bind_rows(apps, conn, model, pks[i : i + chunk], (columns or {}).get(name), note)

    return run


def bind_rows(
    apps: Any, conn: Any, model: Any, pks: list[Any], columns: list[str] | None, note: str
) -> None:
    """In a data migration: one ``audit.bind_existing`` entry binding these rows as they
    are now (historical ``model``; over ``columns``, default every column)."""
    if not pks:
        return
    rows = hashes_of(model, pks, using=conn.alias, columns=columns)
    named = sorted(columns) if columns else columns_of(model)
    bound = {model._meta.db_table: {"columns": named, "rows": rows}}
    entries = apps.get_model("casefiles", "AuditEntry")
    _append(entries, conn, "audit.bind_existing", {BOUND: bound, "note": note})


def _append(entries: Any, conn: Any, action: str, details: dict[str, Any]) -> None:
    """``audit.record`` for a migration: an entry by the system, with historical models."""
    from django.utils import timezone

    from . import audit

    manager = entries.objects.db_manager(conn.alias)
    with transaction.atomic(using=conn.alias):
        if conn.vendor == "postgresql":
            with conn.cursor() as cursor:
                cursor.execute("SELECT pg_advisory_xact_lock(%s)", [audit.PG_LOCK_KEY])
        head = manager.order_by("-seq").values_list("seq", "hash").first()
        seq, prev_hash = (head[0] + 1, head[1]) if head else (1, audit.GENESIS_HASH)
        values = {
            "seq": seq,
            "at": timezone.now(),
            "actor_id": None,
            "actor_label": "",
            "action": action,
            "target_type": "",
            "target_id": "",
            "target_label": "",
            "case_id": None,
            "details": audit.clean_details(details),
            "ip": None,
            "user_agent": "",
        }
        entry = entries(**values, prev_hash=prev_hash, hash=audit.entry_hash(prev_hash, values))
        entry._via_record = True  # what ``audit.record`` sets; historical models ignore it
        entry.save(force_insert=True, using=conn.alias)


# -- verification -----------------------------------------------------------------------


@dataclass
class TableReport:
    table: str
    checked: int = 0
    missing: int = 0
    altered: int = 0
    unbound: int = 0


@dataclass
class BindingReport:
    tables: list[TableReport]
    problems: list[str] = field(default_factory=list)
    problem_count: int = 0

    @property
    def ok(self) -> bool:
        return not self.problem_count

    def summary(self) -> str:
        counts = ", ".join(f"{t.table} {t.checked}" for t in self.tables)
        if self.ok:
            return f"bound rows OK: every append-only row matches the chain ({counts})"
        lines = [f"bound rows BROKEN: {self.problem_count} row(s) do not match the chain"]
        lines += self.problems
        if self.problem_count > len(self.problems):
            lines.append(f"... and {self.problem_count - len(self.problems)} more")
        return "\n".join(lines)


class _Table:
    """One bound table, read in primary-key order as far as the bindings so far need."""

    def __init__(self, model: type[Model], check: BindingCheck, cap: Any, chunk_size: int):
        self.model, self.check, self.cap, self.chunk_size = model, check, cap, chunk_size
        self.table = model._meta.db_table
        self.names = [model._meta.pk.attname, *columns_of(model)]
        self.report = TableReport(self.table)
        self.read_to: Any = None  # highest pk read so far
        self.exhausted = cap is None
        self.bound: dict[Any, tuple[int, tuple[str, ...], str]] = {}  # bindings not yet met
        self.rows: dict[Any, tuple] = {}  # rows read, not yet bound

    def _pk(self, key: str) -> Any:
        return self.model._meta.pk.to_python(key)

    def add(self, seq: int, columns: list[str], rows: Mapping[str, str]) -> None:
        cols = tuple(columns)
        highest = None
        for key, digest in rows.items():
            pk = self._pk(key)
            if pk in self.rows:
                self._compare(pk, self.rows.pop(pk), seq, cols, digest)
            elif pk in self.bound or (self.read_to is not None and pk <= self.read_to):
                self._missing(pk, seq)
            else:
                self.bound[pk] = (seq, cols, digest)
                highest = pk if highest is None or pk > highest else highest
        if highest is not None:
            self._read_until(highest)

    def _read_until(self, upto: Any) -> None:
        while not self.exhausted and (self.read_to is None or self.read_to < upto):
            self._read_chunk()
        for pk in [pk for pk in self.bound if self.exhausted or pk <= self.read_to]:
            self._missing(pk, self.bound.pop(pk)[0])

    def _read_chunk(self) -> None:
        qs = self.model._base_manager.filter(pk__lte=self.cap)
        if self.read_to is not None:
            qs = qs.filter(pk__gt=self.read_to)
        chunk = list(qs.order_by("pk").values_list(*self.names)[: self.chunk_size])
        if len(chunk) < self.chunk_size:
            self.exhausted = True
        for row in chunk:
            pk = row[0]
            if pk in self.bound:
                seq, cols, digest = self.bound.pop(pk)
                self._compare(pk, row, seq, cols, digest)
            else:
                self.rows[pk] = row
        if chunk:
            self.read_to = chunk[-1][0]

    def _compare(self, pk: Any, row: tuple, seq: int, cols: tuple[str, ...], digest: str) -> None:
        self.report.checked += 1
        values = dict(zip(self.names[1:], row[1:], strict=True))
        if set(cols) - set(values) or row_hash({c: values[c] for c in cols}) != digest:
            self.report.altered += 1
            self.check.problem(
                f"{self.table} row {pk}: ALTERED, its content no longer matches the hash "
                f"bound by audit entry seq {seq}"
            )

    def _missing(self, pk: Any, seq: int) -> None:
        self.report.missing += 1
        self.check.problem(
            f"{self.table} row {pk}: MISSING, bound by audit entry seq {seq} but not in the "
            "table (deleted)"
        )

    def finish(self) -> None:
        while not self.exhausted:
            self._read_chunk()
        for pk in list(self.bound):
            self._missing(pk, self.bound.pop(pk)[0])
        for pk in sorted(self.rows):
            self.report.checked += 1
            self.report.unbound += 1
            self.check.problem(
                f"{self.table} row {pk}: UNBOUND, no audit entry binds it (written outside the app)"
            )
        self.rows.clear()


class _TrackedTable:
    """A tracked table (``chain_tracked``): its rows change, each change bound again, so
    every row is compared with its latest binding once the whole chain is read."""

    def __init__(self, model: type[Model], check: BindingCheck, chunk_size: int):
        self.model, self.check, self.chunk_size = model, check, chunk_size
        self.table = model._meta.db_table
        self.names = [model._meta.pk.attname, *columns_of(model)]
        self.report = TableReport(self.table)
        self.latest: dict[Any, tuple[int, tuple[str, ...], str]] = {}

    def add(self, seq: int, columns: list[str], rows: Mapping[str, str]) -> None:
        cols = tuple(columns)
        for key, digest in rows.items():
            self.latest[self.model._meta.pk.to_python(key)] = (seq, cols, digest)

    def finish(self) -> None:
        after = None
        while True:
            qs = self.model._base_manager.order_by("pk")
            if after is not None:
                qs = qs.filter(pk__gt=after)
            chunk = list(qs.values_list(*self.names)[: self.chunk_size])
            for row in chunk:
                self._compare(row)
            if len(chunk) < self.chunk_size:
                break
            after = chunk[-1][0]
        for pk in sorted(self.latest, key=str):
            seq = self.latest.pop(pk)[0]
            self.report.missing += 1
            self.check.problem(
                f"{self.table} row {pk}: MISSING, bound by audit entry seq {seq} but not in "
                "the table (deleted)"
            )

    def _compare(self, row: tuple) -> None:
        pk = row[0]
        self.report.checked += 1
        if pk not in self.latest:
            self.report.unbound += 1
            self.check.problem(
                f"{self.table} row {pk}: UNBOUND, no audit entry binds it (written outside the app)"
            )
            return
        seq, cols, digest = self.latest.pop(pk)
        values = dict(zip(self.names[1:], row[1:], strict=True))
        if set(cols) - set(values) or row_hash({c: values[c] for c in cols}) != digest:
            self.report.altered += 1
            self.check.problem(
                f"{self.table} row {pk}: ALTERED, its content no longer matches the hash "
                f"bound by audit entry seq {seq}, the latest to bind it"
            )


class BindingCheck:
    """Fed every entry of a verified chain (``feed``), then ``finish()``."""

    def __init__(self, chunk_size: int = 5000):
        self.problems: list[str] = []
        self.problem_count = 0
        self.tables: dict[str, _Table | _TrackedTable] = {}
        for model in bound_models():
            if tracked(model):
                self.tables[model._meta.db_table] = _TrackedTable(model, self, chunk_size)
                continue
            # Read in the same snapshot as the chain (``snapshot``): a bound row above the
            # highest primary key now present was deleted.
            cap = model._base_manager.aggregate(m=Max("pk"))["m"]
            self.tables[model._meta.db_table] = _Table(model, self, cap, chunk_size)

    def problem(self, text: str) -> None:
        self.problem_count += 1
        if len(self.problems) < MAX_LISTED:
            self.problems.append(text)

    def feed(self, entry: Mapping[str, Any]) -> None:
        details = entry.get("details")
        bound = details.get(BOUND) if isinstance(details, dict) else None
        if not isinstance(bound, dict):
            return
        for table, binding_ in bound.items():
            state = self.tables.get(table)
            if state is None:
                self.problem(f"audit entry seq {entry['seq']} binds rows of {table}, not a table")
                continue
            state.add(entry["seq"], binding_.get("columns", []), binding_.get("rows", {}))

    def finish(self) -> BindingReport:
        for state in self.tables.values():
            state.finish()
        return BindingReport(
            [t.report for t in self.tables.values()], self.problems, self.problem_count
        )


@contextmanager
def snapshot():
    """One consistent view of the chain and the tables it binds, while verifying.

    PostgreSQL: a read-only REPEATABLE READ transaction. SQLite: a deferred transaction
    (Django's own begin IMMEDIATE, taking the write lock; a deferred one only reads, and
    in WAL mode sees one snapshot throughout). Inside a caller's transaction: that one.
    """
    if connection.in_atomic_block:
        yield
        return
    if connection.vendor == "postgresql":
        with transaction.atomic():
            with connection.cursor() as cursor:
                cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
            yield
        return
    with connection.cursor() as cursor:
        cursor.execute("BEGIN DEFERRED")
    try:
        yield
    finally:
        with connection.cursor() as cursor:
            cursor.execute("ROLLBACK")  # nothing was written
