"""Bulk actions of the review workspace over 10,000 items, against a floor measured in the
same run.

    .venv/bin/python bench/bulk.py [--items 10000] [--keep]
                                   [--database-url postgres://postgres@127.0.0.1:5432]

Makes a fresh database (the PostgreSQL database named on the server --database-url names,
created and dropped by the script; without it, SQLite under a temporary folder), with
DEBUG off as deployed. Writes two cases of ``--items`` items each through bulk paths
(``casefiles.bulk.insert_rows``, as intake writes them), then, on the first case, as a
lawyer confirming "everything the filter matches" on the workspace:

- counts what the action would change (the confirmation page's one query), then
- a bulk tag (``legal.services.bulk``: ``start_bulk`` and ``run_bulk``, in chunks of
  1,000, each a transaction whose audit entry names its items), and
- a bulk submit for review (a review decision per item, bound into the audit chain),

timing each and counting its queries; then checks that every item is named in the audit
log by the entries of each action and that ``verify_log`` (the chain and every bound row)
passes. The floor: on the second case, the same rows written by bare SQL through the
driver (psycopg, or sqlite3), in the same chunks and commits: the tag rows, and the
decision rows with one UPDATE of the statuses per chunk. Last, the workspace page as the
lawyer loads it, whole, with each filter (best of three, ms). The line before last reads
``items=N tag_items_per_s=X tag_queries=Q tag_ratio_to_floor=R submit_items_per_s=...
every_item_named=yes workspace_page_ms_max=M``; the last says whether the goal, 2,000
items/s or more for each, is met (exit 1 if not). ``--keep`` leaves the database (its
URL printed) to look into, with ``EXPLAIN`` say.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
import uuid
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GOAL = 2000  # items per second


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--database-url", help="a PostgreSQL server: postgres://user@host:port")
    parser.add_argument("--keep", action="store_true", help="keep the database, to look into")
    args = parser.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="athar-bench-bulk-"))
    env = {
        **os.environ,
        "ATHAR_DATA_DIR": str(tmp),
        "ATHAR_DEBUG": "0",  # as deployed: no SQL kept per query
        "DJANGO_SETTINGS_MODULE": "athar.settings",
    }
    pg_name = server = None
    if args.database_url:
        import psycopg

        pg_name = f"athar_bench_{uuid.uuid4().hex[:10]}"
        server = args.database_url.rstrip("/").replace("postgres://", "postgresql://", 1)
        with psycopg.connect(f"{server}/postgres", autocommit=True) as admin:
            admin.execute(f'CREATE DATABASE "{pg_name}"')
        env["DATABASE_URL"] = f"{args.database_url.rstrip('/')}/{pg_name}"
    else:
        env["DATABASE_URL"] = f"sqlite:///{tmp / 'bench.sqlite3'}"
    try:
        subprocess.run(
            [sys.executable, str(ROOT / "manage.py"), "migrate", "-v", "0"], env=env, check=True
        )
        os.environ.update(env)
        return run(args)
    finally:
        if args.keep:
            print(f"kept: DATABASE_URL={env['DATABASE_URL']} ATHAR_DATA_DIR={tmp}")
        elif pg_name:
            import psycopg

            with psycopg.connect(f"{server}/postgres", autocommit=True) as admin:
                admin.execute(f'DROP DATABASE IF EXISTS "{pg_name}" WITH (FORCE)')


# The floor's statements: the same rows as the app writes, without the app.
FLOOR_TAGS_PG = (
    "INSERT INTO evidence_evidenceitem_tags (evidenceitem_id, tag_id)"
    " SELECT unnest(%s::bigint[]), %s ON CONFLICT DO NOTHING"
)
FLOOR_TAGS_SQLITE = (
    "INSERT INTO evidence_evidenceitem_tags (evidenceitem_id, tag_id) VALUES (?, ?)"
    " ON CONFLICT DO NOTHING"
)
_DECISION = (
    "INSERT INTO people_reviewdecision"
    " (item_id, from_status, to_status, actor_id, at, comment, sha256)"
)
FLOOR_DECISIONS_PG = (
    _DECISION + " SELECT unnest(%s::bigint[]), 'draft', 'submitted', %s, now(), '',"
    " unnest(%s::text[])"
)
FLOOR_DECISIONS_SQLITE = (
    _DECISION + " VALUES (?, 'draft', 'submitted', ?, strftime('%Y-%m-%d %H:%M:%f', 'now'), '', ?)"
)
FLOOR_SUBMIT = "UPDATE evidence_evidenceitem SET review_status = 'submitted' WHERE id "


@contextmanager
def counted(connection):
    """Count the statements the app sends (an execute wrapper: DEBUG stays off)."""
    seen = [0]

    def count(execute, sql, params, many, context):
        seen[0] += 1
        return execute(sql, params, many, context)

    with connection.execute_wrapper(count):
        yield seen


def run(args) -> int:
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Group
    from django.db import connection, transaction

    from casefiles.access import LAWYER_GROUP, Role
    from casefiles.audit import verify_log
    from casefiles.bulk import insert_rows
    from casefiles.models import AuditEntry, Case, Membership
    from evidence.models import EvidenceItem, StoredFile, Tag
    from evidence.originals import original_key
    from evidence.services import next_references
    from legal.models import BulkJob, ReviewDecision
    from legal.services import bulk

    n = args.items
    lawyer = get_user_model().objects.create(username="bench-lawyer")
    lawyer.groups.add(Group.objects.get(name=LAWYER_GROUP))
    cases = [Case.objects.create(reference=f"BENCH-{k}", title="bench") for k in (1, 2)]
    for case in cases:
        Membership.objects.create(user=lawyer, case=case, role=Role.LAWYER)

    start = time.perf_counter()
    for k, case in enumerate(cases):
        for done in range(0, n, 5000):
            size = min(5000, n - done)
            with transaction.atomic():
                refs = next_references(case, size)
                digests = [f"{k:02x}{done + i:062x}" for i in range(size)]
                pks = insert_rows(
                    StoredFile,
                    [
                        dict(sha256=d, size=1, media_type="image/jpeg", storage_key=original_key(d))
                        for d in digests
                    ],
                    returning=True,
                )
                originals = dict(StoredFile.objects.filter(pk__in=pks).values_list("sha256", "pk"))
                insert_rows(
                    EvidenceItem,
                    [
                        dict(
                            case_id=case.pk,
                            reference=ref,
                            kind="photo",
                            original_filename=f"{ref}.jpg",
                            original_path=f"DCIM/{ref}.jpg",
                            original_id=originals[d],
                        )
                        for ref, d in zip(refs, digests, strict=True)
                    ],
                )
    print(f"{connection.vendor}: {2 * n} items written in {time.perf_counter() - start:.1f} s")
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")
    case, floor_case = cases

    figures = {}
    for name, values in (("tag", {"tag": "morgue"}), ("submit", {})):
        action = "tag_add" if name == "tag" else "submit"
        through = bulk.newest_item(case)
        resolved = bulk.check(lawyer, case, action, values)
        items = bulk.targets(lawyer, case, query="kind=photo", selection=None, through=through)
        start = time.perf_counter()
        preview = bulk.preview(lawyer, case, action, resolved, items)
        preview_s = time.perf_counter() - start
        assert preview.changes == n, preview
        with counted(connection) as queries:
            start = time.perf_counter()
            job = bulk.start_bulk(
                actor=lawyer,
                case=case,
                action=action,
                values=values,
                query="kind=photo",
                through=through,
            )
            job = bulk.run_bulk(BulkJob.objects.select_related("actor", "case").get(pk=job.pk))
            seconds = time.perf_counter() - start
        assert (job.status, job.changed) == ("done", n), (job.status, job.changed, job.error)
        verb = bulk.ACTIONS[action].verb
        entries = AuditEntry.objects.filter(action=verb, target_id=str(job.pk))
        named = [
            ref for details in entries.values_list("details", flat=True) for ref in details["items"]
        ]
        every = set(EvidenceItem.objects.filter(case=case).values_list("reference", flat=True))
        assert len(named) == len(set(named)) == n and set(named) == every, "items not named"
        figures[name] = {
            "seconds": seconds,
            "items_per_s": n / seconds,
            "queries": queries[0],
            "entries": entries.count(),
            "preview_s": preview_s,
        }
        print(
            f"{name}: items={n} seconds={seconds:.3f} items_per_s={n / seconds:.0f} "
            f"queries={queries[0]} audit_entries={entries.count()} every_item_named=yes "
            f"confirmation_count_s={preview_s:.3f}"
        )
    assert ReviewDecision.objects.filter(to_status="submitted").count() == n
    start = time.perf_counter()
    chain, bound = verify_log()
    print(
        f"verify_log: {chain.summary()} / {bound.summary() if bound else ''} "
        f"({time.perf_counter() - start:.1f} s)"
    )
    assert chain.ok and bound is not None and bound.ok

    # The floor: the same rows, by bare SQL through the driver, on the second case's items,
    # in the same chunks, one commit each (no audit entry, no binding, no checks).
    tag = Tag.objects.create(case=floor_case, name="morgue")
    rows = list(
        EvidenceItem.objects.filter(case=floor_case)
        .order_by("pk")
        .values_list("pk", "original__sha256")
    )
    connection.ensure_connection()
    raw = connection.connection
    postgres = connection.vendor == "postgresql"
    chunk = bulk.CHUNK
    start = time.perf_counter()
    for i in range(0, n, chunk):
        ids = [pk for pk, _sha in rows[i : i + chunk]]
        with transaction.atomic(), _cursor(raw) as cursor:
            if postgres:  # one statement per chunk, as the app's bulk_create sends
                cursor.execute(FLOOR_TAGS_PG, [ids, tag.pk])
            else:  # no server to talk to: executemany is sqlite3's own fast path
                cursor.executemany(FLOOR_TAGS_SQLITE, [(pk, tag.pk) for pk in ids])
    floor_tag = time.perf_counter() - start
    start = time.perf_counter()
    for i in range(0, n, chunk):
        part = rows[i : i + chunk]
        ids = [pk for pk, _sha in part]
        with transaction.atomic(), _cursor(raw) as cursor:
            if postgres:
                cursor.execute(FLOOR_DECISIONS_PG, [ids, lawyer.pk, [sha for _pk, sha in part]])
                cursor.execute(FLOOR_SUBMIT + "= ANY(%s)", [ids])
            else:
                cursor.executemany(
                    FLOOR_DECISIONS_SQLITE, [(pk, lawyer.pk, sha) for pk, sha in part]
                )
                cursor.execute(FLOOR_SUBMIT + f"IN ({', '.join('?' * len(ids))})", ids)
    floor_submit = time.perf_counter() - start
    for name, floor in (("tag", floor_tag), ("submit", floor_submit)):
        f = figures[name]
        f["floor_s"], f["ratio"] = floor, f["seconds"] / floor
        print(f"{name} floor: bare SQL {floor:.3f} s ({n / floor:.0f} rows/s)")
    pages = workspace_pages(case, lawyer)
    print(
        f"{connection.vendor}: items={n} "
        + " ".join(
            f"{name}_items_per_s={f['items_per_s']:.0f} {name}_queries={f['queries']} "
            f"{name}_ratio_to_floor={f['ratio']:.1f}"
            for name, f in figures.items()
        )
        + f" every_item_named=yes workspace_page_ms_max={max(pages.values()):.0f}"
    )
    missed = [name for name, f in figures.items() if f["items_per_s"] < GOAL]
    print(f"goal {GOAL} items/s: " + (f"MISSED by {', '.join(missed)}" if missed else "met"))
    return 1 if missed else 0


def workspace_pages(case, lawyer) -> dict[str, float]:
    """The workspace page of ``case`` as its lawyer loads it, whole (session, filters, the
    page of items, grades, the audit entry), with each filter: the best of three, in ms.
    Some items are given grades, links, a sensitivity and a near-duplicate group first
    (rows written straight, unbound: for the page's timing only, after the audit check)."""
    from django.db import connection
    from django.test import Client
    from django.urls import reverse
    from django_otp import DEVICE_ID_SESSION_KEY
    from django_otp.plugins.otp_totp.models import TOTPDevice

    from casefiles.bulk import insert_rows
    from evidence.models import EvidenceItem
    from legal.models import Assessment, ElementLink, LegalElement

    items = list(EvidenceItem.objects.filter(case=case).order_by("pk").values_list("pk", flat=True))
    element = LegalElement.objects.order_by("pk").first()
    insert_rows(
        Assessment,
        [
            dict(
                case_id=case.pk,
                item_id=pk,
                assessor_id=lawyer.pk,
                reliability="B",
                credibility="2",
                consistency="same",
                geolocation="unknown",
                rationale="bench",
            )
            for pk in items[::20]
        ],
    )
    insert_rows(
        ElementLink,
        [
            dict(
                case_id=case.pk,
                element_id=element.pk,
                item_id=pk,
                stance="supports",
                proposition="bench",
                author_id=lawyer.pk,
            )
            for pk in items[5::20]
        ],
    )
    EvidenceItem.objects.filter(pk__in=items[::50]).update(sensitivity="strict")
    EvidenceItem.objects.filter(pk__in=items[7:37]).update(near_group=items[7])
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")  # as autovacuum would after so many rows changed
    client = Client(HTTP_HOST="localhost")
    device = TOTPDevice.objects.create(user=lawyer, name="bench", confirmed=True)
    client.force_login(lawyer)
    session = client.session
    session[DEVICE_ID_SESSION_KEY] = device.persistent_id
    session.save()
    url = reverse("legal:workspace", args=[case.reference])
    middle = EvidenceItem.objects.get(pk=items[len(items) // 2]).reference
    filters = {
        "none": {},
        "status": {"status": "submitted"},
        "grades": {"reliability": "B", "credibility": "2"},
        "element": {"element": element.code, "stance": "supports"},
        "reviewer": {"reviewer": lawyer.pk},
        "sensitivity": {"sensitivity": "strict"},
        "group": {"near_group": items[7]},
        "tag": {"tag": "morgue"},
        "kind_and_page": {"kind": "photo", "after": middle},
        "rare": {"status": "approved"},  # matches nothing: the whole index walked
    }
    timings = {}
    for name, params in filters.items():
        best = float("inf")
        for _ in range(3):
            start = time.perf_counter()
            response = client.get(url, params)
            best = min(best, time.perf_counter() - start)
            assert response.status_code == 200, response.status_code
        timings[name] = best * 1000
    print(
        f"workspace page, {len(items)} items, ms (best of 3): "
        + " ".join(f"{name}={ms:.0f}" for name, ms in timings.items())
    )
    return timings


@contextmanager
def _cursor(raw):
    cursor = raw.cursor()
    try:
        yield cursor
    finally:
        cursor.close()


if __name__ == "__main__":
    sys.exit(main())
