"""A throw-away, fully migrated database for tests that need several processes.

Such tests commit for real, so they work on their own database rather than the test
database (which is rolled back, and whose append-only tables cannot be flushed).
"""

import os
import subprocess
import sys
import uuid
from contextlib import contextmanager
from pathlib import Path

import psycopg
from django.db import connection

ROOT = Path(__file__).resolve().parent.parent


def run_manage(env, *args, check=True, **kwargs):
    return subprocess.run(
        [sys.executable, str(ROOT / "manage.py"), *args],
        env=env,
        cwd=ROOT,
        check=check,
        capture_output=True,
        text=True,
        **kwargs,
    )


def count_rows(env, table: str) -> int:
    """Rows in a table of the scratch database, read directly (no Django start-up)."""
    url = env["DATABASE_URL"]
    if url.startswith("sqlite:///"):
        import sqlite3

        with sqlite3.connect(url.removeprefix("sqlite:///"), timeout=30) as db:
            return db.execute(f'SELECT count(*) FROM "{table}"').fetchone()[0]
    with psycopg.connect(url.replace("postgres://", "postgresql://", 1)) as db:
        return db.execute(f'SELECT count(*) FROM "{table}"').fetchone()[0]


@contextmanager
def scratch_database(tmp_path, migrate=True):
    """Yield an environment (os.environ plus DATABASE_URL) naming a new, migrated DB
    (empty, not even migrated, with ``migrate=False``)."""
    env = {**os.environ, "ATHAR_DATA_DIR": str(tmp_path / "data")}
    s = connection.settings_dict
    if connection.vendor == "postgresql":
        name = f"athar_scratch_{uuid.uuid4().hex[:12]}"
        conninfo = psycopg.conninfo.make_conninfo(
            dbname="postgres",
            host=s["HOST"] or None,
            port=s["PORT"] or None,
            user=s["USER"] or None,
            password=s["PASSWORD"] or None,
        )
        with psycopg.connect(conninfo, autocommit=True) as admin:
            admin.execute(f'CREATE DATABASE "{name}"')
        user = f"{s['USER']}{':' + s['PASSWORD'] if s['PASSWORD'] else ''}@" if s["USER"] else ""
        env["DATABASE_URL"] = f"postgres://{user}{s['HOST']}:{s['PORT'] or 5432}/{name}"
    else:
        env["DATABASE_URL"] = f"sqlite:///{tmp_path / 'scratch.sqlite3'}"
    try:
        if migrate:
            run_manage(env, "migrate", "--no-input")
        yield env
    finally:
        if connection.vendor == "postgresql":
            with psycopg.connect(conninfo, autocommit=True) as admin:
                admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
