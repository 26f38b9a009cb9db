"""An approved testimony is locked at the database: its row cannot change or go, and
no version can be added to it."""

from django.db import migrations

_PG = [
    """
CREATE OR REPLACE FUNCTION athar_testimony_locked() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF OLD.status = 'approved' THEN
        RAISE EXCEPTION USING
            MESSAGE = 'athar: ' || TG_OP || ' of an approved testimony refused: it is locked',
            ERRCODE = 'insufficient_privilege';
    END IF;
    IF TG_OP = 'DELETE' THEN RETURN OLD; END IF;
    RETURN NEW;
END
$$
""",
    """
CREATE OR REPLACE FUNCTION athar_testimony_version_locked() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF (SELECT status FROM people_testimony WHERE id = NEW.testimony_id) = 'approved' THEN
        RAISE EXCEPTION USING
            MESSAGE = 'athar: new version of an approved testimony refused: it is locked',
            ERRCODE = 'insufficient_privilege';
    END IF;
    RETURN NEW;
END
$$
""",
    'CREATE TRIGGER "people_testimony_locked" BEFORE UPDATE OR DELETE ON "people_testimony" '
    "FOR EACH ROW EXECUTE FUNCTION athar_testimony_locked()",
    'CREATE TRIGGER "people_testimonyversion_locked" BEFORE INSERT ON "people_testimonyversion" '
    "FOR EACH ROW EXECUTE FUNCTION athar_testimony_version_locked()",
]
_PG_REVERSE = [
    'DROP TRIGGER IF EXISTS "people_testimony_locked" ON "people_testimony"',
    'DROP TRIGGER IF EXISTS "people_testimonyversion_locked" ON "people_testimonyversion"',
]
_SQLITE = [
    *(
        f'CREATE TRIGGER "people_testimony_locked_{op.lower()}" BEFORE {op} ON "people_testimony" '
        "WHEN OLD.status = 'approved' BEGIN "
        f"SELECT RAISE(ABORT, 'athar: {op} of an approved testimony refused: it is locked'); END"
        for op in ("UPDATE", "DELETE")
    ),
    'CREATE TRIGGER "people_testimonyversion_locked" BEFORE INSERT ON "people_testimonyversion" '
    "WHEN (SELECT status FROM people_testimony WHERE id = NEW.testimony_id) = 'approved' BEGIN "
    "SELECT RAISE(ABORT, 'athar: new version of an approved testimony refused: it is locked'); END",
]
_SQLITE_REVERSE = [
    'DROP TRIGGER IF EXISTS "people_testimony_locked_update"',
    'DROP TRIGGER IF EXISTS "people_testimony_locked_delete"',
    'DROP TRIGGER IF EXISTS "people_testimonyversion_locked"',
]


def _run(statements):
    def run(apps, schema_editor):
        vendor = schema_editor.connection.vendor
        for sql in statements[vendor]:
            schema_editor.execute(sql, params=None)

    return run


class Migration(migrations.Migration):
    dependencies = [("people", "0002_append_only_history")]

    operations = [
        migrations.RunPython(
            _run({"postgresql": _PG, "sqlite": _SQLITE}),
            _run({"postgresql": _PG_REVERSE, "sqlite": _SQLITE_REVERSE}),
        )
    ]
