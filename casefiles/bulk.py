"""Many rows in one statement, for the hot path of intake.

``QuerySet.bulk_create`` builds a model instance per row and compiles every value into
the SQL on each call: for a chunk of 400 photos that is 95% of the coordinator's time,
the database's own work 3%. ``insert_rows`` writes the same rows with one
``executemany``: each value still goes through its field's ``get_db_prep_save`` (JSON,
datetimes and decimals are stored exactly as the ORM stores them), defaults and
``auto_now_add`` are filled as ``save()`` fills them, and the database's own guards
(constraints, append-only triggers) apply as to any insert.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

from django.db import connections, models, router
from django.db.models import Field, Model
from django.db.models.constants import OnConflict
from django.utils import timezone

# Fields whose value, when it is already of the type the column takes (or None), may be
# sent as it is: their ``get_db_prep_save`` gives it back unchanged, through three or four
# calls a value (on a chunk of intake, 130,000 values). Whether it does is asked of the
# field once per database (psycopg wraps integers, for one), with a value of that type;
# tests/casefiles/test_bulk.py checks the claim on both databases for every such field of
# every model. A field of another class (a subclass too: it may prepare values its own
# way) always goes through it.
PLAIN_TYPES: dict[type[Field[Any, Any]], type] = {
    models.CharField: str,
    models.TextField: str,
    models.SlugField: str,
    models.IntegerField: int,
    models.BigIntegerField: int,
    models.SmallIntegerField: int,
    models.PositiveIntegerField: int,
    models.PositiveBigIntegerField: int,
    models.PositiveSmallIntegerField: int,
    models.AutoField: int,
    models.BigAutoField: int,
    models.SmallAutoField: int,
}
_PROBES: dict[type, Any] = {str: "EV-000001", int: 1}
_sent_as_is: dict[tuple[Field[Any, Any], str], type | None] = {}


def plain_type(field: Field[Any, Any], connection: Any) -> type | None:
    """The type of value ``field`` sends as it is to ``connection``'s database, or None."""
    key = (field, connection.alias)
    if key not in _sent_as_is:
        plain = _declared_plain(field)
        if plain is not None:
            probe = _PROBES[plain]
            if field.get_db_prep_save(probe, connection) is not probe:
                plain = None
        _sent_as_is[key] = plain
    return _sent_as_is[key]


def _declared_plain(field: Field[Any, Any]) -> type | None:
    if type(field) is models.ForeignKey or type(field) is models.OneToOneField:
        return _declared_plain(field.target_field)
    return PLAIN_TYPES.get(type(field))


def _prepare(field: Field[Any, Any], connection: Any) -> Any:
    """A function preparing one value of ``field`` for the database."""
    plain = plain_type(field, connection)
    prep = field.get_db_prep_save
    if plain is None:
        return lambda value: prep(value, connection)
    return lambda value: value if value is None or type(value) is plain else prep(value, connection)


def insert_rows(
    model: type[Model],
    rows: Sequence[Mapping[str, Any]],
    *,
    ignore_conflicts: bool = False,
    returning: bool = False,
    also_returning: Sequence[str] = (),
) -> list[Any] | None:
    """INSERT ``rows`` (dicts keyed by field attname: ``case_id``, not ``case``).

    Every row names the same fields; a field not named takes its default, as in
    ``Model()``. With ``returning``, the primary keys of the rows written are returned
    (in no promised order: multi-row ``INSERT ... RETURNING``); otherwise nothing, and
    the caller reads back what it needs. ``also_returning`` (columns, with ``returning``):
    each row's primary key comes with them, as a tuple ``(pk, *columns)``, so the caller
    can tell which row got which key.
    """
    if returning and ignore_conflicts:
        raise ValueError("returning and ignore_conflicts do not go together")
    if also_returning and not returning:
        raise ValueError("also_returning needs returning")
    if not rows:
        return [] if returning else None
    meta = model._meta
    given = set(rows[0])
    fields = [f for f in meta.concrete_fields if not (f.primary_key and f.db_returning)]
    known = {f.attname for f in fields}
    if unknown := given - known:
        raise ValueError(f"{meta.label} has no column for {sorted(unknown)}")
    now = timezone.now()
    fixed: dict[str, Any] = {}
    for f in fields:
        if f.attname in given:
            continue
        auto = getattr(f, "auto_now", False) or getattr(f, "auto_now_add", False)
        fixed[f.attname] = now if auto else f.get_default()  # as Model() and save() do
    connection = connections[router.db_for_write(model)]
    ops = connection.ops
    on_conflict = OnConflict.IGNORE if ignore_conflicts else None
    named = [f for f in fields if f.attname in given]
    defaulted = [f for f in fields if f.attname in fixed]
    constant = [f.get_db_prep_save(fixed[f.attname], connection) for f in defaulted]
    columns = ", ".join(ops.quote_name(cast(str, f.column)) for f in named + defaulted)
    marks = ", ".join(["%s"] * (len(named) + len(defaulted)))
    sql = (
        f"{ops.insert_statement(on_conflict=on_conflict)} {ops.quote_name(meta.db_table)} "
        f"({columns}) VALUES ({marks})"
    )
    if suffix := ops.on_conflict_suffix_sql(named, on_conflict, None, None):
        sql += f" {suffix}"
    preps = [(f.attname, _prepare(f, connection)) for f in named]
    params = [[prep(row[name]) for name, prep in preps] + constant for row in rows]
    if returning:
        return _insert_returning(
            connection,
            sql.removesuffix(f"VALUES ({marks})"),
            marks,
            params,
            [cast(str, meta.pk.column), *also_returning],
        )
    with connection.cursor() as cursor:
        cursor.executemany(sql, params)
    return None


def _insert_returning(
    connection, head: str, marks: str, params: list[list[Any]], columns: list[str]
) -> list[Any]:
    """Multi-row VALUES with RETURNING the primary key (PostgreSQL; SQLite 3.35+), alone
    or as the first of ``columns``."""
    width = len(params[0])
    per = max(1, min(connection.features.max_query_params or 65535, 65535) // width)
    returned = ", ".join(connection.ops.quote_name(c) for c in columns)
    pks: list[Any] = []
    with connection.cursor() as cursor:
        for i in range(0, len(params), per):
            chunk = params[i : i + per]
            values = ", ".join([f"({marks})"] * len(chunk))
            cursor.execute(
                f"{head}VALUES {values} RETURNING {returned}",
                [value for row in chunk for value in row],
            )
            got = cursor.fetchall()
            pks += [row[0] for row in got] if len(columns) == 1 else [tuple(r) for r in got]
    return pks
