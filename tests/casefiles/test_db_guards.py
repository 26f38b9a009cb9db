"""The append-only guards every applied migration declares stay in the database."""

import pytest
from django.db import connection

from casefiles import db
from tests.scratch_db import run_manage, scratch_database

pytestmark = pytest.mark.django_db

GUARDED = {
    "casefiles_auditentry",
    "casefiles_auditcheckpoint",
    "evidence_custodyevent",
    "evidence_provenance",
    "evidence_storedfile",
    "evidence_evidenceitem",
    "people_testimonyversion",
    "people_consent",
    "people_reviewdecision",
    "people_protectionchange",
    "people_person",
    "legal_elementlink",
    "legal_linkconfirmation",
    "legal_linkwithdrawal",
    "legal_assessment",
    "legal_comment",
    "incidents_incidentversion",
    "missing_statuschange",
}

# What a migration altering the table does on SQLite: copy it into a new table (which has
# no triggers), drop the old one, rename. Then the same ``migrate`` run a deploy makes.
REBUILD = """
from django.db import connection
from casefiles import db
from casefiles.models import AuditEntry
with connection.schema_editor() as editor:
    editor._remake_table(AuditEntry)
print("after rebuild:", sorted(db._triggers(connection, "casefiles_auditentry")))
"""
TAMPER = """
from django.db import connection
with connection.cursor() as cursor:
    cursor.execute('ALTER TABLE "casefiles_auditentry" DISABLE TRIGGER USER')
"""
DROP = """
from django.db import connection
from casefiles import db
with connection.cursor() as cursor:
    for sql in db.remove_sql(connection.vendor, "evidence_custodyevent"):
        cursor.execute(sql)
"""
ENTRIES = """
from casefiles.models import AuditEntry
for e in AuditEntry.objects.filter(action="audit.guard_missing"):
    print("recorded:", sorted(e.details["tables"]))
"""
UPDATE = """
from django.db import connection
from casefiles import audit
audit.record(None, "test.entry")
with connection.cursor() as cursor:
    cursor.execute("UPDATE casefiles_auditentry SET action = 'changed'")
"""


def test_every_guard_the_migrations_declare_is_in_the_database():
    assert {table for table, _ in db.declared_guards(connection)} == GUARDED
    assert db.missing_guards(connection) == []


def test_a_guard_lost_to_a_table_rebuild_is_back_after_migrate_and_a_removed_one_stops_it(
    tmp_path,
):
    with scratch_database(tmp_path) as env:
        if connection.vendor == "sqlite":
            rebuilt = run_manage(env, "shell", "--no-imports", "-c", REBUILD)
            assert "after rebuild: []" in rebuilt.stdout  # SQLite dropped the triggers
            migrated = run_manage(env, "migrate")
            assert "Append-only guards put back on casefiles_auditentry" in migrated.stdout
        else:
            run_manage(env, "shell", "--no-imports", "-c", TAMPER)
            migrated = run_manage(env, "migrate", check=False)
            assert migrated.returncode != 0
            assert "guards missing or disabled: casefiles_auditentry" in migrated.stderr
            return
        refused = run_manage(env, "shell", "--no-imports", "-c", UPDATE, check=False)
        assert refused.returncode != 0
        assert "append-only" in refused.stderr


def test_a_guard_removed_before_migrate_is_an_error_that_is_recorded(tmp_path):
    with scratch_database(tmp_path) as env:
        run_manage(env, "shell", "--no-imports", "-c", DROP)  # someone with the database
        migrated = run_manage(env, "migrate", check=False)
        assert "ERROR: database guards were missing before this migrate" in migrated.stderr
        assert "evidence_custodyevent" in migrated.stderr
        recorded = run_manage(env, "shell", "--no-imports", "-c", ENTRIES)
        assert "recorded: ['evidence_custodyevent']" in recorded.stdout
        if connection.vendor == "postgresql":
            assert migrated.returncode != 0  # PostgreSQL stops; SQLite puts it back
            return
        assert migrated.returncode == 0
        again = run_manage(env, "migrate")
        assert "ERROR" not in again.stderr  # put back: the next migrate finds it there
