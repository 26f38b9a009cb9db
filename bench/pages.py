"""The list pages at scale: the gallery, an item, the testimony list, the people list and
the audit log, with their filters, at 100,000 evidence items in one case and more.

    .venv/bin/python bench/pages.py [--items 100000] [--grow-to 1000000] [--repeat 15]
                                    [--database-url postgres://postgres@127.0.0.1:5432]
                                    [--keep]

Makes a fresh PostgreSQL database on the server ``--database-url`` names (created and
dropped by the script), with DEBUG off as deployed, and writes one case through bulk
paths (``casefiles.bulk.insert_rows``, as intake writes its rows): ``--items`` evidence
items with their stored files, provenance (eight cameras, one of them rare; dates over
two years; GPS), thumbnails and intake batches of 55,000; a few changed, flagged and
near-duplicate items; 2,000 witnesses with a testimony each; and an audit log of one
entry per five items, hash-chained as the app writes it. Then ``ANALYZE``, as
autovacuum would.

Each page is loaded by a signed-in lead through Django's test client (the whole request:
session, access checks, the page's queries, its template, its audit entry), once to warm
and then ``--repeat`` times: per page the median and p95 in ms and the number of queries.
The floor: the same SELECT statements the page sent, run bare through psycopg on the same
connection (the page's writes, its audit entry, are not replayed); the ratio is the
page's median to the floor's.

With ``--grow-to M``, a copy of that database (``CREATE DATABASE ... TEMPLATE``) grows to M
items the same way, and every page is measured on both, the two sizes in turns request by
request: the machine's load, whatever it does meanwhile, weighs on both sizes alike. Each
page's median at M is divided by its median at ``--items`` (the goal: at most 1.25). The
last line reads ``items=M worst_median_ms=X worst_p95_ms=Y`` for the last size measured.
Exit 1 when a goal is missed: a median over 60 ms or a p95 over 120 ms at 100,000 items
or fewer, or a growth ratio over 1.25.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHUNK = 5000
BATCH = 55_000  # items per intake batch: one Caesar drive
CAMERAS = ["NIKON D90", "NIKON D3100", "Canon EOS 7D", "Canon EOS 550D", "SONY DSC-W55"]
CAMERAS += ["FinePix S2950", "COOLPIX P100"]
RARE_CAMERA = "Leica M9"  # one item in 5,000
WITNESSES = 2000
GOAL_MEDIAN_MS, GOAL_P95_MS, GOAL_GROWTH = 60.0, 120.0, 1.25


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--grow-to", type=int, default=0, help="then grow the case to M items")
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument(
        "--database-url",
        default="postgres://postgres@127.0.0.1:5432",
        help="a PostgreSQL server: postgres://user@host:port",
    )
    parser.add_argument("--keep", action="store_true", help="keep the database, to look into")
    args = parser.parse_args()
    import psycopg

    tmp = Path(tempfile.mkdtemp(prefix="athar-bench-pages-"))
    pg_name = f"athar_bench_{uuid.uuid4().hex[:10]}"
    server = args.database_url.rstrip("/").replace("postgres://", "postgresql://", 1)
    with psycopg.connect(f"{server}/postgres", autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{pg_name}"')
    env = {
        **os.environ,
        "ATHAR_DATA_DIR": str(tmp),
        "ATHAR_DEBUG": "0",
        "DJANGO_SETTINGS_MODULE": "athar.settings",
        "DATABASE_URL": f"{args.database_url.rstrip('/')}/{pg_name}",
    }
    try:
        subprocess.run(
            [sys.executable, str(ROOT / "manage.py"), "migrate", "-v", "0"], env=env, check=True
        )
        os.environ.update(env)
        return run(args, server, pg_name)
    finally:
        names = [pg_name, f"{pg_name}_grown"]
        if args.keep:
            print(f"kept: databases {' '.join(names)} on {args.database_url}; ATHAR_DATA_DIR={tmp}")
        else:
            with psycopg.connect(f"{server}/postgres", autocommit=True) as admin:
                for name in names:
                    admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def run(args, server: str, pg_name: str) -> int:
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.db import connection

    from casefiles.access import Role
    from casefiles.models import Case, Membership

    user_model = get_user_model()
    lead = user_model.objects.create(username="bench-lead")
    case = Case.objects.create(reference="BENCH-1", title="bench")
    Membership.objects.create(user=lead, case=case, role=Role.LEAD)

    start = time.perf_counter()
    write_items(case, lead, 0, args.items)
    write_people(case, lead)
    write_audit(case, lead, args.items // 5)
    analyze(connection)
    print(f"{args.items} items written in {time.perf_counter() - start:.0f} s")
    sizes = [(pg_name, args.items)]
    if args.grow_to > args.items:
        # The grown case lives in a copy of the first database, so both sizes can be
        # measured in turns: the machine's load, whatever it is, weighs on both alike.
        import psycopg

        start = time.perf_counter()
        grown = f"{pg_name}_grown"
        connection.close()
        with psycopg.connect(f"{server}/postgres", autocommit=True) as admin:
            admin.execute(f'CREATE DATABASE "{grown}" TEMPLATE "{pg_name}"')
        use_database(grown)
        write_items(case, lead, args.items, args.grow_to)
        write_audit(case, lead, (args.grow_to - args.items) // 5)
        analyze(connection)
        print(f"grown to {args.grow_to} items (a copy) in {time.perf_counter() - start:.0f} s")
        sizes.append((grown, args.grow_to))
    measured = measure(case, lead, sizes, args.repeat)
    first = measured[args.items]
    missed = [
        f"{name} at {args.items}"
        for name, f in first.items()
        if args.items <= 100_000 and (f["median"] > GOAL_MEDIAN_MS or f["p95"] > GOAL_P95_MS)
    ]
    last, size = first, args.items
    if args.grow_to > args.items:
        last, size = measured[args.grow_to], args.grow_to
        growth = {name: last[name]["median"] / first[name]["median"] for name in first}
        print(
            f"median at {args.grow_to} / median at {args.items} (measured in turns): "
            + " ".join(f"{name}={ratio:.2f}" for name, ratio in growth.items())
        )
        missed += [f"{name} grew {r:.2f}x" for name, r in growth.items() if r > GOAL_GROWTH]
        print(f"worst_growth={max(growth.values()):.2f}")
    print(
        f"goals (median <= {GOAL_MEDIAN_MS:.0f} ms, p95 <= {GOAL_P95_MS:.0f} ms at 100,000; "
        f"growth <= {GOAL_GROWTH}): " + (f"MISSED: {', '.join(missed)}" if missed else "met")
    )
    print(
        f"items={size} worst_median_ms={max(f['median'] for f in last.values()):.1f} "
        f"worst_p95_ms={max(f['p95'] for f in last.values()):.1f}"
    )
    return 1 if missed else 0


def use_database(name: str) -> None:
    """Point Django's connection at database ``name`` (connected now, not in a timing)."""
    from django.db import connection

    connection.close()
    connection.settings_dict["NAME"] = name
    connection.ensure_connection()


def analyze(connection) -> None:
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE")  # as autovacuum would after so many rows


def write_items(case, lead, begin: int, end: int) -> None:
    """Items ``begin`` to ``end`` of the case, in chunks of 5,000, each one transaction."""
    from django.db import transaction

    from casefiles.bulk import insert_rows
    from evidence.models import Derivative, EvidenceItem, IntakeBatch, Provenance, StoredFile
    from evidence.originals import original_key
    from evidence.services import next_references

    batches: dict[int, int] = dict(
        (int(label.rsplit(" ", 1)[1]), pk)
        for pk, label in IntakeBatch.objects.filter(case=case).values_list("pk", "label")
    )
    day0 = date(2011, 5, 1)
    for done in range(begin, end, CHUNK):
        size = min(CHUNK, end - done)
        numbers = range(done, done + size)
        for b in {n // BATCH for n in numbers} - set(batches):
            batches[b] = IntakeBatch.objects.create(
                case=case,
                label=f"drive {b}",
                source_root=f"/media/drive-{b}",
                acquired_from="bench",
                created_by=lead,
                status="done",
            ).pk
        with transaction.atomic():
            refs = next_references(case, size)
            digests = [f"{n:064x}" for n in numbers]
            insert_rows(
                StoredFile,
                [
                    dict(
                        sha256=d, size=600_000, media_type="image/jpeg", storage_key=original_key(d)
                    )
                    for d in digests
                ],
            )
            originals = dict(
                StoredFile.objects.filter(sha256__in=digests).values_list("sha256", "pk")
            )
            insert_rows(
                EvidenceItem,
                [
                    dict(
                        case_id=case.pk,
                        reference=ref,
                        kind="photo" if n % 20 else ("video" if n % 40 else "document"),
                        original_filename=f"IMG_{n:07d}.JPG",
                        original_path=f"DCIM/{n // 1000:04d}/IMG_{n:07d}.JPG",
                        original_id=originals[d],
                        batch_id=batches[n // BATCH],
                        integrity="changed" if n % 1000 == 999 else "intake",
                        is_flagged=n % 500 == 7,
                        flags=[{"code": "exif_date", "reason": "bench"}] if n % 500 == 7 else [],
                        near_group=n - n % 3 if n % 97 < 3 else None,
                    )
                    for n, ref, d in zip(numbers, refs, digests, strict=True)
                ],
            )
            items = dict(
                EvidenceItem.objects.filter(case=case, reference__in=refs).values_list(
                    "reference", "pk"
                )
            )
            now = datetime.now(UTC)
            insert_rows(
                Provenance,
                [
                    dict(
                        item_id=items[ref],
                        acquired_from="bench",
                        acquired_by_id=lead.pk,
                        acquired_at=now,
                        camera_make="bench",
                        camera_model=RARE_CAMERA if n % 5000 == 11 else CAMERAS[n % len(CAMERAS)],
                        taken_date=day0 + timedelta(days=(n * 7919) % 730),
                        taken_at=f"{day0 + timedelta(days=(n * 7919) % 730):%Y:%m:%d} 10:00:00",
                        gps_latitude="33.5138000",
                        gps_longitude="36.2765000",
                    )
                    for n, ref in zip(numbers, refs, strict=True)
                ],
            )
            insert_rows(
                Derivative,
                [
                    dict(
                        original_id=originals[d],
                        kind="thumbnail",
                        storage_key=f"thumbs/{d[:2]}/{d}.jpg",
                        media_type="image/jpeg",
                        width=256,
                        height=192,
                        size=9000,
                        tool="bench",
                    )
                    for d in digests
                ],
            )


def write_people(case, lead) -> None:
    """2,000 witnesses, each with a testimony of one version (rows only: the list pages
    read no identity)."""
    from django.db import transaction

    from casefiles.bulk import insert_rows
    from people.models import CaseRole, Person, Testimony, TestimonyVersion, text_sha256

    people = [uuid.uuid4() for _ in range(WITNESSES)]
    start = datetime(2012, 1, 1, tzinfo=UTC)
    with transaction.atomic():
        insert_rows(
            Person,
            [
                dict(
                    id=pk,
                    code=f"W-{k + 1:04d}",
                    case_id=case.pk,
                    enc_name_ar="-",
                    enc_name_latin="-",
                    enc_aliases="-",
                    enc_birth_date="-",
                    enc_phone="-",
                    enc_address="-",
                    enc_risk_notes="-",
                    protection_level=("standard", "high", "critical")[k % 3],
                    created_by_id=lead.pk,
                )
                for k, pk in enumerate(people)
            ],
        )
        insert_rows(
            CaseRole,
            [
                dict(person_id=pk, case_id=case.pk, role="witness", recorded_by_id=lead.pk)
                for pk in people
            ],
        )
        testimonies = insert_rows(
            Testimony,
            [
                dict(
                    case_id=case.pk,
                    witness_id=pk,
                    taken_at=start + timedelta(hours=7 * k),
                    language="ar" if k % 4 else "en",
                    mode="in_person",
                    created_by_id=lead.pk,
                )
                for k, pk in enumerate(people)
            ],
            returning=True,
        )
        text = "رأيت المعتقلين في الفرع."
        insert_rows(
            TestimonyVersion,
            [
                dict(
                    testimony_id=pk,
                    number=1,
                    text=text,
                    reason="first",
                    sha256=text_sha256(text),
                    author_id=lead.pk,
                )
                for pk in testimonies or []
            ],
        )


ACTIONS = ["evidence.view", "evidence.gallery", "testimony.view", "case.view", "people.view"]


def write_audit(case, lead, n: int) -> None:
    """``n`` entries more, chained as ``audit.record`` chains them; one in 1,000 a
    download."""
    from django.db import transaction

    from casefiles.audit import GENESIS_HASH, entry_hash
    from casefiles.bulk import insert_rows
    from casefiles.models import AuditEntry

    with transaction.atomic():
        head = AuditEntry.objects.order_by("-seq").values_list("seq", "hash").first()
        seq, prev = head if head else (0, GENESIS_HASH)
        at = datetime.now(UTC) - timedelta(seconds=n)
        rows = []
        for k in range(n):
            seq += 1
            values = {
                "seq": seq,
                "at": at + timedelta(seconds=k),
                "actor_id": lead.pk,
                "actor_label": lead.username,
                "action": "evidence.download" if k % 1000 == 0 else ACTIONS[k % len(ACTIONS)],
                "target_type": "",
                "target_id": "",
                "target_label": "",
                "case_id": case.pk,
                "details": {"n": k},
                "ip": None,
                "user_agent": "",
            }
            digest = entry_hash(prev, values)
            rows.append({**values, "prev_hash": prev, "hash": digest})
            prev = digest
            if len(rows) == CHUNK:
                insert_rows(AuditEntry, rows)
                rows = []
        insert_rows(AuditEntry, rows)


def pages_at(case, lead, size: int) -> dict[str, tuple[object, str, dict]]:
    """Each page of the case in the database connected now: (client, url, params)."""
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Group
    from django.test import Client
    from django.urls import reverse
    from django_otp import DEVICE_ID_SESSION_KEY
    from django_otp.plugins.otp_totp.models import TOTPDevice

    from casefiles.access import ADMIN_GROUP
    from evidence.models import EvidenceItem, IntakeBatch
    from people.models import Testimony

    def signed_in(user) -> Client:
        client = Client(HTTP_HOST="localhost")
        device, _ = TOTPDevice.objects.get_or_create(user=user, name="bench", confirmed=True)
        client.force_login(user)
        session = client.session
        session[DEVICE_ID_SESSION_KEY] = device.persistent_id
        session.save()
        return client

    admin, _ = get_user_model().objects.get_or_create(username="bench-admin")
    admin.groups.add(Group.objects.get(name=ADMIN_GROUP))
    as_lead, as_admin = signed_in(lead), signed_in(admin)

    ref = case.reference
    gallery = reverse("evidence:gallery", args=[ref])
    middle = f"EV-{size // 2:06d}"
    batch = IntakeBatch.objects.filter(case=case).order_by("pk").values_list("pk", flat=True)
    batch_pk = list(batch)[len(batch) // 2]
    group = EvidenceItem.objects.filter(case=case, near_group__isnull=False).values_list(
        "near_group", flat=True
    )[0]
    testimonies = reverse("people:testimony_list", args=[ref])
    mid_testimony = Testimony.objects.order_by("-taken_at", "pk")[WITNESSES // 2]
    audit_log = reverse("casefiles:audit_list")
    from casefiles.models import AuditEntry

    mid_seq = AuditEntry.objects.order_by("-seq").values_list("seq", flat=True).first() // 2
    pages = {
        "gallery": (gallery, {}),
        "gallery_kind": (gallery, {"kind": "video"}),
        "gallery_camera": (gallery, {"camera": CAMERAS[2]}),
        "gallery_rare_camera": (gallery, {"camera": RARE_CAMERA}),
        "gallery_month": (gallery, {"taken_after": "2012-03-01", "taken_before": "2012-03-31"}),
        "gallery_changed": (gallery, {"integrity": "changed"}),
        "gallery_flagged": (gallery, {"flagged": "true"}),
        "gallery_batch": (gallery, {"batch": batch_pk}),
        "gallery_group": (gallery, {"near_group": group}),
        "gallery_deep": (gallery, {"after": middle}),
        "gallery_kind_deep": (gallery, {"kind": "photo", "after": middle}),
        "item": (reverse("evidence:item_detail", args=[ref, middle]), {}),
        "testimonies": (testimonies, {}),
        "testimonies_english": (testimonies, {"language": "en"}),
        "testimonies_deep": (
            testimonies,
            {"after": _cursor_of(mid_testimony)},
        ),
        "people": (reverse("people:people_list", args=[ref]), {}),
        "audit": (audit_log, {}),
        "audit_downloads": (audit_log, {"action": "evidence.download"}),
        "audit_case": (audit_log, {"case": case.pk}),
        "audit_deep": (audit_log, {"before": mid_seq}),
    }
    return {
        name: (
            as_admin if name.startswith("audit") else as_lead,
            url,
            params,
        )  # the log: an admin's
        for name, (url, params) in pages.items()
    }


def measure(case, lead, sizes: list[tuple[str, int]], repeat: int) -> dict[int, dict]:
    """Every page at each size (a database each), the sizes taken in turns request by
    request; per size and page the median and p95 in ms, the queries, and the floor."""
    from django.db import connection

    at: dict[int, dict] = {}
    for database, size in sizes:
        use_database(database)
        at[size] = pages_at(case, lead, size)
    figures: dict[int, dict[str, dict[str, float]]] = {size: {} for _, size in sizes}
    for name in at[sizes[0][1]]:
        timings: dict[int, list[float]] = {size: [] for _, size in sizes}
        statements: dict[int, list[tuple[str, object]]] = {}
        for turn in range(repeat + 1):  # the first turn warms
            for database, size in sizes:
                client, url, params = at[size][name]
                use_database(database)
                seen: list[tuple[str, object]] = []

                def keep(execute, sql, params, many, context, seen=seen):
                    seen.append((sql, params))
                    return execute(sql, params, many, context)

                with connection.execute_wrapper(keep):
                    start = time.perf_counter()
                    response = client.get(url, params)
                    elapsed = (time.perf_counter() - start) * 1000
                assert response.status_code == 200, (name, size, response.status_code)
                if turn:
                    timings[size].append(elapsed)
                    statements[size] = seen
        for database, size in sizes:
            use_database(database)
            floor = replay(connection, statements[size], repeat)
            median, p95 = statistics.median(timings[size]), _p95(timings[size])
            figures[size][name] = {
                "median": median,
                "p95": p95,
                "queries": len(statements[size]),
                "floor": floor,
            }
    for _, size in sizes:
        print(f"-- {size} items: page median_ms p95_ms queries floor_ms ratio_to_floor")
        for name, f in figures[size].items():
            print(
                f"{name} {f['median']:.1f} {f['p95']:.1f} {f['queries']} {f['floor']:.1f} "
                f"{f['median'] / f['floor']:.1f}"
            )
    return figures


def _cursor_of(testimony) -> str:
    from people.testimony_views import TESTIMONY_PAGES

    return TESTIMONY_PAGES.cursor(testimony)


SLOWEST = os.environ.get("BENCH_SLOWEST") == "1"  # name each page's slowest statement


def replay(connection, statements, repeat: int) -> float:
    """The median time of the page's SELECTs, sent bare through psycopg (ms)."""
    import psycopg

    # A compound statement starts with its first part's parenthesis: "(SELECT ...) UNION".
    reads = [(sql, p) for sql, p in statements if sql.lstrip(" (").upper().startswith("SELECT")]
    connection.ensure_connection()
    raw = connection.connection
    timings = []
    each = [0.0] * len(reads)
    for _ in range(repeat):
        start = time.perf_counter()
        with psycopg.ClientCursor(raw) as cursor:
            for k, (sql, params) in enumerate(reads):
                began = time.perf_counter()
                cursor.execute(sql, params)
                cursor.fetchall()
                each[k] += time.perf_counter() - began
        raw.rollback()
        timings.append((time.perf_counter() - start) * 1000)
    if SLOWEST and reads:
        k = max(range(len(reads)), key=each.__getitem__)
        print(f"   slowest {each[k] * 1000 / repeat:.1f} ms: {reads[k][0][:600]}")
    return statistics.median(timings)


def _p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


if __name__ == "__main__":
    sys.exit(main())
