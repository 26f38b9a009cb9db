"""An approved testimony stays locked at the database, with one way out: back to
"submitted", and only when the latest review decision on it records that step (legal's
``reopen``, taken when its statement changes after approval). Any other change of an
approved testimony's row, its deletion, and a new version while it is approved are
refused as before (people.0003)."""

from django.db import migrations

_REOPENED = (
    "NEW.status = 'submitted' AND EXISTS (SELECT 1 FROM people_reviewdecision d "
    "WHERE d.testimony_id = NEW.id AND d.from_status = 'approved' "
    "AND d.to_status = 'submitted' AND d.id = "
    "(SELECT max(d2.id) FROM people_reviewdecision d2 WHERE d2.testimony_id = NEW.id))"
)
_PG_FUNCTION = """
CREATE OR REPLACE FUNCTION athar_testimony_locked() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF OLD.status = 'approved' THEN
        IF TG_OP = 'UPDATE' AND %s THEN
            RETURN NEW;
        END IF;
        RAISE EXCEPTION USING
            MESSAGE = 'athar: ' || TG_OP || ' of an approved testimony refused: it is locked',
            ERRCODE = 'insufficient_privilege';
    END IF;
    IF TG_OP = 'DELETE' THEN RETURN OLD; END IF;
    RETURN NEW;
END
$$
"""
_PG = [_PG_FUNCTION % _REOPENED]
_PG_REVERSE = [_PG_FUNCTION % "FALSE"]
_SQLITE_UPDATE = (
    'CREATE TRIGGER "people_testimony_locked_update" BEFORE UPDATE ON "people_testimony" '
    "WHEN OLD.status = 'approved' AND NOT (%s) BEGIN "
    "SELECT RAISE(ABORT, 'athar: UPDATE of an approved testimony refused: it is locked'); END"
)
_SQLITE = ['DROP TRIGGER IF EXISTS "people_testimony_locked_update"', _SQLITE_UPDATE % _REOPENED]
_SQLITE_REVERSE = [
    'DROP TRIGGER IF EXISTS "people_testimony_locked_update"',
    _SQLITE_UPDATE % "0",
]


def _run(statements):
    def run(apps, schema_editor):
        for sql in statements[schema_editor.connection.vendor]:
            schema_editor.execute(sql, params=None)

    return run


class Migration(migrations.Migration):
    dependencies = [("legal", "0001_initial")]

    operations = [
        migrations.RunPython(
            _run({"postgresql": _PG, "sqlite": _SQLITE}),
            _run({"postgresql": _PG_REVERSE, "sqlite": _SQLITE_REVERSE}),
        )
    ]
