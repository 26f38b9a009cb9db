"""Database-level guards: triggers that make a table append-only.

Used from migrations through the ``AppendOnly`` operation, for audit entries now and for
custody events and testimony versions later. PostgreSQL refuses UPDATE, DELETE and
TRUNCATE (row triggers do not fire on TRUNCATE, hence the statement trigger); SQLite
refuses UPDATE and DELETE with ``RAISE(ABORT, ...)``.

SQLite drops a table's triggers whenever a migration rebuilds the table (most ALTERs
there copy it into a new one): after every ``migrate``, ``verify_guards`` puts back on
SQLite any guard an applied migration declared and the database lacks. On PostgreSQL
nothing drops them but a person: a missing or disabled guard there stops ``migrate``.
"""

from __future__ import annotations

import re

from django.db.migrations.operations.base import Operation

_PG_FUNCTION = """
CREATE OR REPLACE FUNCTION athar_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION USING
        MESSAGE = 'athar: ' || TG_OP || ' on ' || TG_TABLE_NAME || ' refused: append-only',
        ERRCODE = 'insufficient_privilege';
END
$$
"""


def install_sql(vendor: str, table: str) -> list[str]:
    if vendor == "postgresql":
        return [
            _PG_FUNCTION,
            f'CREATE TRIGGER "{table}_append_only_row" BEFORE UPDATE OR DELETE ON "{table}" '
            "FOR EACH ROW EXECUTE FUNCTION athar_append_only()",
            f'CREATE TRIGGER "{table}_append_only_truncate" BEFORE TRUNCATE ON "{table}" '
            "FOR EACH STATEMENT EXECUTE FUNCTION athar_append_only()",
        ]
    if vendor == "sqlite":
        return [
            f'CREATE TRIGGER "{table}_append_only_{op.lower()}" BEFORE {op} ON "{table}" '
            f"BEGIN SELECT RAISE(ABORT, 'athar: {op} on {table} refused: append-only'); END"
            for op in ("UPDATE", "DELETE")
        ]
    raise NotImplementedError(f"No append-only guard for the {vendor} backend.")


def remove_sql(vendor: str, table: str) -> list[str]:
    if vendor == "postgresql":
        return [
            f'DROP TRIGGER IF EXISTS "{table}_append_only_{name}" ON "{table}"'
            for name in ("row", "truncate")
        ]
    return [f'DROP TRIGGER IF EXISTS "{table}_append_only_{op}"' for op in ("update", "delete")]


class TableGuard(Operation):
    """Migration operation installing triggers on a model's table (``install``), and
    dropping them when unapplied (``remove``)."""

    reversible = True
    reduces_to_sql = True
    model_name: str

    def install(self, vendor: str, table: str) -> list[str]:
        raise NotImplementedError

    def remove(self, vendor: str, table: str) -> list[str]:
        raise NotImplementedError

    def state_forwards(self, app_label, state) -> None:
        pass

    def _run(self, sql_for, app_label, schema_editor, state) -> None:
        table = state.apps.get_model(app_label, self.model_name)._meta.db_table
        for sql in sql_for(schema_editor.connection.vendor, table):
            schema_editor.execute(sql, params=None)

    def database_forwards(self, app_label, schema_editor, from_state, to_state) -> None:
        self._run(self.install, app_label, schema_editor, to_state)

    def database_backwards(self, app_label, schema_editor, from_state, to_state) -> None:
        self._run(self.remove, app_label, schema_editor, from_state)


class AppendOnly(TableGuard):
    """Migration operation: install the append-only triggers on a model's table."""

    def __init__(self, model_name: str) -> None:
        self.model_name = model_name

    def deconstruct(self):
        return self.__class__.__qualname__, [self.model_name], {}

    def install(self, vendor: str, table: str) -> list[str]:
        return install_sql(vendor, table)

    def remove(self, vendor: str, table: str) -> list[str]:
        return remove_sql(vendor, table)

    def describe(self) -> str:
        return f"Make {self.model_name} append-only with database triggers"

    @property
    def migration_name_fragment(self) -> str:
        return f"{self.model_name.lower()}_append_only"


class AdoptAppendOnly(AppendOnly):
    """Migration operation: declare the append-only guard of a table whose model moved
    here from another app (the triggers that app's migration made are made again, so the
    guard is known under the model's new app; nothing is unguarded in between)."""

    def install(self, vendor: str, table: str) -> list[str]:
        return [*remove_sql(vendor, table), *install_sql(vendor, table)]

    def remove(self, vendor: str, table: str) -> list[str]:
        return []  # the triggers stay: the other app's migration made them

    def describe(self) -> str:
        return f"Declare {self.model_name}'s append-only guard here"


def immutable_columns_sql(
    vendor: str, table: str, columns: list[str], suffix: str = "immutable_columns"
) -> list[str]:
    """Triggers refusing any change to ``columns`` (the row may change otherwise)."""
    name = f"{table}_{suffix}"
    if vendor == "postgresql":
        changed = " OR ".join(f'NEW."{c}" IS DISTINCT FROM OLD."{c}"' for c in columns)
        return [
            f"""
CREATE OR REPLACE FUNCTION "{name}"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF {changed} THEN
        RAISE EXCEPTION USING
            MESSAGE = 'athar: ' || TG_TABLE_NAME || ': {", ".join(columns)} never change',
            ERRCODE = 'insufficient_privilege';
    END IF;
    IF TG_OP = 'DELETE' THEN RETURN OLD; END IF;
    RETURN NEW;
END
$$""",
            f'CREATE TRIGGER "{name}" BEFORE UPDATE ON "{table}" '
            f'FOR EACH ROW EXECUTE FUNCTION "{name}"()',
            f'CREATE TRIGGER "{name}_delete" BEFORE DELETE ON "{table}" '
            "FOR EACH ROW EXECUTE FUNCTION athar_append_only()",
        ]
    if vendor == "sqlite":
        changed = " OR ".join(f'NEW."{c}" IS NOT OLD."{c}"' for c in columns)
        return [
            f'CREATE TRIGGER "{name}" BEFORE UPDATE ON "{table}" WHEN {changed} '
            f"BEGIN SELECT RAISE(ABORT, 'athar: {table}: {', '.join(columns)} never change'); END",
            f'CREATE TRIGGER "{name}_delete" BEFORE DELETE ON "{table}" '
            f"BEGIN SELECT RAISE(ABORT, 'athar: DELETE on {table} refused: append-only'); END",
        ]
    raise NotImplementedError(f"No immutable-column guard for the {vendor} backend.")


def drop_immutable_columns_sql(
    vendor: str, table: str, suffix: str = "immutable_columns"
) -> list[str]:
    name = f"{table}_{suffix}"
    if vendor == "postgresql":
        return [
            f'DROP TRIGGER IF EXISTS "{name}" ON "{table}"',
            f'DROP TRIGGER IF EXISTS "{name}_delete" ON "{table}"',
            f'DROP FUNCTION IF EXISTS "{name}"()',
        ]
    return [f'DROP TRIGGER IF EXISTS "{name}"', f'DROP TRIGGER IF EXISTS "{name}_delete"']


class ImmutableColumns(TableGuard):
    """Migration operation: some columns of a table never change, its rows never go."""

    def __init__(
        self, model_name: str, columns: list[str], suffix: str = "immutable_columns"
    ) -> None:
        # ``suffix`` names the triggers: a later migration guarding more columns of the
        # same table adds triggers of another name beside the first ones.
        self.model_name, self.columns, self.suffix = model_name, list(columns), suffix

    def deconstruct(self):
        kwargs = {} if self.suffix == "immutable_columns" else {"suffix": self.suffix}
        return self.__class__.__qualname__, [self.model_name, self.columns], kwargs

    def install(self, vendor: str, table: str) -> list[str]:
        sql = immutable_columns_sql(vendor, table, self.columns, self.suffix)
        return [_PG_FUNCTION, *sql] if vendor == "postgresql" else sql  # athar_append_only()

    def remove(self, vendor: str, table: str) -> list[str]:
        return drop_immutable_columns_sql(vendor, table, self.suffix)

    def describe(self) -> str:
        return f"Make {', '.join(self.columns)} of {self.model_name} immutable"

    @property
    def migration_name_fragment(self) -> str:
        return f"{self.model_name.lower()}_immutable"


class ChangesWithRecord(TableGuard):
    """Migration operation: ``column`` of a table changes only to what the latest row of a
    history table (append-only, bound into the audit chain) records for that row.

    E.g. a person's protection level: the service writes a ``ProtectionChange`` row
    (from, to, who, why), audited, then updates the level; an UPDATE of the level without
    that row (or one not matching it) is refused by the database. A history row written
    behind the app's back to get past this is bound by no audit entry, and
    ``verify_audit`` names it.
    """

    def __init__(
        self, model_name: str, column: str, history_table: str, key: str, from_col: str, to_col: str
    ) -> None:
        self.model_name, self.column = model_name, column
        self.history_table, self.key = history_table, key
        self.from_col, self.to_col = from_col, to_col

    def deconstruct(self):
        args = [self.model_name, self.column, self.history_table, self.key]
        return self.__class__.__qualname__, [*args, self.from_col, self.to_col], {}

    def _name(self, table: str) -> str:
        return f"{table}_{self.column}_recorded"

    def _recorded(self, old: str, new: str) -> str:
        h, c = self.history_table, self.column  # names from a migration, not input
        return (
            f'EXISTS (SELECT 1 FROM "{h}" h WHERE h."{self.key}" = {new}."id" '  # noqa: S608
            f'AND h."{self.from_col}" = {old}."{c}" AND h."{self.to_col}" = {new}."{c}" '
            f'AND h."id" = (SELECT max(h2."id") FROM "{h}" h2 '
            f'WHERE h2."{self.key}" = {new}."id"))'
        )

    def install(self, vendor: str, table: str) -> list[str]:
        name, c = self._name(table), self.column
        message = f"athar: {table}.{c} changes only with a recorded change ({self.history_table})"
        if vendor == "postgresql":
            return [
                f"""
CREATE OR REPLACE FUNCTION "{name}"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW."{c}" IS DISTINCT FROM OLD."{c}" AND NOT {self._recorded("OLD", "NEW")} THEN
        RAISE EXCEPTION USING MESSAGE = '{message}', ERRCODE = 'insufficient_privilege';
    END IF;
    RETURN NEW;
END
$$""",
                f'CREATE TRIGGER "{name}" BEFORE UPDATE ON "{table}" '
                f'FOR EACH ROW EXECUTE FUNCTION "{name}"()',
            ]
        if vendor == "sqlite":
            return [
                f'CREATE TRIGGER "{name}" BEFORE UPDATE ON "{table}" '
                f'WHEN NEW."{c}" IS NOT OLD."{c}" AND NOT {self._recorded("OLD", "NEW")} '
                f"BEGIN SELECT RAISE(ABORT, '{message}'); END"
            ]
        raise NotImplementedError(f"No recorded-change guard for the {vendor} backend.")

    def remove(self, vendor: str, table: str) -> list[str]:
        name = self._name(table)
        if vendor == "postgresql":
            return [
                f'DROP TRIGGER IF EXISTS "{name}" ON "{table}"',
                f'DROP FUNCTION IF EXISTS "{name}"()',
            ]
        return [f'DROP TRIGGER IF EXISTS "{name}"']

    def describe(self) -> str:
        return f"{self.model_name}.{self.column} changes only with a row in {self.history_table}"

    @property
    def migration_name_fragment(self) -> str:
        return f"{self.model_name.lower()}_{self.column}_recorded"


# -- the guards the applied migrations declare, and whether the database has them --------
_TRIGGER_NAME = re.compile(r'CREATE TRIGGER "([^"]+)"')


class GuardMissing(RuntimeError):
    """A table's append-only or immutable-column triggers are gone where nothing should
    drop them."""


def declared_guards(connection) -> list[tuple[str, TableGuard]]:
    """(table, operation) of every guard in a migration applied to ``connection``."""
    from django.apps import apps
    from django.db.migrations.loader import MigrationLoader

    loader = MigrationLoader(connection, ignore_no_migrations=True)
    found = []
    for key in sorted(loader.applied_migrations):
        migration = loader.graph.nodes.get(key)
        for op in getattr(migration, "operations", []):
            if isinstance(op, TableGuard):
                try:
                    table = apps.get_model(key[0], op.model_name)._meta.db_table
                except LookupError:  # the model was removed by a later migration
                    continue
                found.append((table, op))
    return found


def _triggers(connection, table: str) -> set[str]:
    """Names of the enabled triggers on ``table``."""
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(
                "SELECT tgname FROM pg_trigger WHERE tgrelid = %s::regclass "
                "AND NOT tgisinternal AND tgenabled <> 'D'",
                [f'"{table}"'],
            )
        else:
            cursor.execute(
                "SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = %s", [table]
            )
        return {name for (name,) in cursor.fetchall()}


def missing_guards(connection) -> list[tuple[str, TableGuard, list[str]]]:
    """(table, guard, trigger names lacking) for each declared guard not fully there."""
    missing = []
    for table, op in declared_guards(connection):
        install = op.install(connection.vendor, table)
        wanted = {m[1] for sql in install if (m := _TRIGGER_NAME.search(sql))}
        if lacking := sorted(wanted - _triggers(connection, table)):
            missing.append((table, op, lacking))
    return missing


def verify_guards(connection) -> list[str]:
    """Put back on SQLite the guards a table rebuild dropped; returns those tables.

    Raises ``GuardMissing`` on PostgreSQL, where only a person removes or disables them.
    """
    missing = missing_guards(connection)
    if missing and connection.vendor != "sqlite":
        names = ", ".join(f"{table} ({', '.join(lacking)})" for table, _, lacking in missing)
        raise GuardMissing(
            f"Append-only guards missing or disabled: {names}. Someone removed them; "
            "find out who (the audit chain still verifies what was written) before "
            "putting them back."
        )
    with connection.cursor() as cursor:
        for table, op, _ in missing:
            for sql in [*op.remove("sqlite", table), *op.install("sqlite", table)]:
                cursor.execute(sql)
    return [table for table, _, _ in missing]
