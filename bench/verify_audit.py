"""How long `verify_audit` takes once custody events are bound into the chain.

    .venv/bin/python bench/verify_audit.py [--rows 10000] [--chunk 400] [--database-url URL]

Makes a fresh database (SQLite under a temporary folder, or the PostgreSQL database named
on the server --database-url names, e.g. postgres://postgres@127.0.0.1:5432, created
and dropped by the script), writes ``--rows`` custody events in chunks the way
intake does (one transaction and one audit entry per chunk, through
``evidence.custody_events.record_custody``), then times:

- the chain walk alone (``verify_chain``), and
- the whole check (``verify_log``: the chain and every bound row, streamed in chunks),

and the write side: ``record_custody`` against the same rows inserted without binding.
The last line reads ``rows=N chain_s=A verify_s=B bound_rows_s=B-A write_bound_s=W
write_unbound_s=U``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--chunk", type=int, default=400)
    parser.add_argument("--database-url", help="a PostgreSQL server: postgres://user@host:port")
    args = parser.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="athar-bench-verify-"))
    env = {**os.environ, "ATHAR_DATA_DIR": str(tmp), "DJANGO_SETTINGS_MODULE": "athar.settings"}
    pg_name = None
    if args.database_url:
        import psycopg

        pg_name = f"athar_bench_{uuid.uuid4().hex[:10]}"
        server = args.database_url.rstrip("/")
        with psycopg.connect(
            f"{server.replace('postgres://', 'postgresql://', 1)}/postgres", autocommit=True
        ) as admin:
            admin.execute(f'CREATE DATABASE "{pg_name}"')
        env["DATABASE_URL"] = f"{server}/{pg_name}"
    else:
        env["DATABASE_URL"] = f"sqlite:///{tmp / 'bench.sqlite3'}"
    try:
        subprocess.run(
            [sys.executable, str(ROOT / "manage.py"), "migrate", "-v", "0"], env=env, check=True
        )
        os.environ.update(env)
        return run(args)
    finally:
        if pg_name:
            import psycopg

            with psycopg.connect(
                f"{server.replace('postgres://', 'postgresql://', 1)}/postgres", autocommit=True
            ) as admin:
                admin.execute(f'DROP DATABASE IF EXISTS "{pg_name}" WITH (FORCE)')


def run(args) -> int:
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.db import connection, transaction
    from django.utils import timezone

    from casefiles.audit import verify_chain, verify_log
    from casefiles.bulk import insert_rows
    from casefiles.models import Case
    from evidence.custody_events import record_custody
    from evidence.models import CustodyEvent

    actor = get_user_model().objects.create(username="bench")
    case = Case.objects.create(reference="BENCH-1", title="bench")

    def rows(n: int, tag: str) -> list[dict]:
        now = timezone.now()
        return [
            dict(
                case_id=case.pk,
                action=CustodyEvent.Action.STORED,
                at=now,
                actor_id=actor.pk,
                to_custodian="bench",
                purpose="intake",
                sha256=f"{i:064x}",
                hash_result=CustodyEvent.HashResult.MATCH,
                notes=f"{tag} {i}",
            )
            for i in range(n)
        ]

    start = time.perf_counter()
    for done in range(0, args.rows, args.chunk):
        with transaction.atomic():
            record_custody(
                rows(min(args.chunk, args.rows - done), "bound"),
                actor=actor,
                action="evidence.intake",
                case=case,
            )
    write_bound = time.perf_counter() - start

    start = time.perf_counter()
    chain = verify_chain()
    chain_s = time.perf_counter() - start
    assert chain.ok, chain.summary()
    start = time.perf_counter()
    chain, bound = verify_log()
    verify_s = time.perf_counter() - start
    assert chain.ok and bound is not None and bound.ok, bound and bound.summary()
    print(chain.summary())
    print(bound.summary())

    # The same rows, not bound (what intake wrote before): the write side's cost of binding.
    start = time.perf_counter()
    for done in range(0, args.rows, args.chunk):
        with transaction.atomic():
            insert_rows(CustodyEvent, rows(min(args.chunk, args.rows - done), "unbound"))
    write_unbound = time.perf_counter() - start

    print(
        f"{connection.vendor}: rows={args.rows} chain_s={chain_s:.3f} verify_s={verify_s:.3f} "
        f"bound_rows_s={verify_s - chain_s:.3f} write_bound_s={write_bound:.3f} "
        f"write_unbound_s={write_unbound:.3f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
