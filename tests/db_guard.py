"""Test-only helper: lift the append-only triggers of a table, as an attacker with DB
access could, to show that tampering is still detected."""

from contextlib import contextmanager

from django.db import connection

from casefiles import db


@contextmanager
def guard_lifted(table: str):
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            # ALTER TABLE waits for no pending deferred FK checks of this transaction.
            cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
            cursor.execute(f'ALTER TABLE "{table}" DISABLE TRIGGER USER')
        else:
            for sql in db.remove_sql(connection.vendor, table):
                cursor.execute(sql)
    try:
        yield
    finally:
        with connection.cursor() as cursor:
            if connection.vendor == "postgresql":
                cursor.execute(f'ALTER TABLE "{table}" ENABLE TRIGGER USER')
            else:
                for sql in db.install_sql(connection.vendor, table):
                    cursor.execute(sql)
