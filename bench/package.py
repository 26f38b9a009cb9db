"""Building a disclosure package of about 2,000 photos (about 1 GB), against a floor
measured in the same run.

    .venv/bin/python bench/package.py [--photos 2000] [--size 500000]
                                      [--database-url postgres://postgres@127.0.0.1:5432]

Makes a fresh database (PostgreSQL on the server --database-url names, created and
dropped; without it, SQLite under a temporary folder) and data folder, with DEBUG off as
deployed. Writes ``--photos`` files of ``--size`` random bytes through the evidence store
(write-once, fsynced), their items approved in review with their intake custody event
(bound into the audit chain, as intake binds them), then a lawyer requests a package of
them all and a lead approves it. Then, timed:

- the floor: ``cp`` of the same stored files into a new folder, then ``sha256sum`` and
  ``sha512sum`` of the copies (three commands, as a person would check a copy);
- the build: ``start_build`` and ``run_build`` (access and contents checked again, the
  bag written and hashed, custody and audit excerpt, signature, the tar file written,
  fsynced and stored, an exported custody event per item).

The floor runs before and after the build and the faster is kept (the page cache holds
the files for both). The last lines read ``photos=N bytes=B build_s=X floor_s=Y ratio=R``
and whether the goal, a ratio under 2, is met (exit 1 if not).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GOAL = 2.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--photos", type=int, default=2000)
    parser.add_argument("--size", type=int, default=500_000, help="bytes per photo")
    parser.add_argument("--database-url", help="a PostgreSQL server: postgres://user@host:port")
    args = parser.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="athar-bench-package-"))
    env = {
        **os.environ,
        "ATHAR_DATA_DIR": str(tmp / "data"),
        "ATHAR_DEBUG": "0",
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
        return run(args, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        if pg_name:
            import psycopg

            with psycopg.connect(f"{server}/postgres", autocommit=True) as admin:
                admin.execute(f'DROP DATABASE IF EXISTS "{pg_name}" WITH (FORCE)')


def floor(files: list[Path], where: Path) -> float:
    """``cp`` the files into a new folder, then ``sha256sum`` and ``sha512sum`` the copies."""
    shutil.rmtree(where, ignore_errors=True)
    where.mkdir()
    start = time.perf_counter()
    subprocess.run(["cp", "-t", str(where), *map(str, files)], check=True)
    copies = [str(where / f.name) for f in files]
    subprocess.run(["sha256sum", *copies], check=True, stdout=subprocess.DEVNULL)
    subprocess.run(["sha512sum", *copies], check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def run(args, tmp: Path) -> int:
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Group
    from django.db import transaction
    from django.utils import timezone

    from casefiles.access import INVESTIGATOR_GROUP, LAWYER_GROUP, Role
    from casefiles.bulk import insert_rows
    from casefiles.models import Case, Membership
    from disclosure import services
    from evidence.custody_events import record_custody
    from evidence.models import EvidenceItem, StoredFile
    from evidence.services import next_references
    from evidence.storage import evidence_storage

    users = get_user_model().objects
    lawyer = users.create(username="bench-lawyer")
    lawyer.groups.add(Group.objects.get(name=LAWYER_GROUP))
    lead = users.create(username="bench-lead")
    lead.groups.add(Group.objects.get(name=INVESTIGATOR_GROUP))
    case = Case.objects.create(reference="BENCH-1", title="bench")
    Membership.objects.create(user=lawyer, case=case, role=Role.LAWYER)
    Membership.objects.create(user=lead, case=case, role=Role.LEAD)

    store = evidence_storage()
    start = time.perf_counter()
    written = []
    for _ in range(args.photos):
        data = b"\xff\xd8\xff\xe0" + os.urandom(args.size - 4)  # JPEG-like, incompressible
        written.append(store.write_original(iter([data])))
    now = timezone.now()
    with transaction.atomic():
        refs = next_references(case, args.photos)
        pks = insert_rows(
            StoredFile,
            [
                dict(sha256=w.sha256, size=w.size, media_type="image/jpeg", storage_key=w.key)
                for w in written
            ],
            returning=True,
        )
        item_pks = insert_rows(
            EvidenceItem,
            [
                dict(
                    case_id=case.pk,
                    reference=ref,
                    kind="photo",
                    original_filename=f"IMG_{n:04d}.JPG",
                    original_path=f"DCIM/100CANON/IMG_{n:04d}.JPG",
                    original_id=pk,
                    review_status="approved",
                )
                for n, (ref, pk) in enumerate(zip(refs, pks, strict=True))
            ],
            returning=True,
        )
        record_custody(
            [
                dict(
                    case_id=case.pk,
                    item_id=pk,
                    action="acquired",
                    at=now,
                    actor_id=lead.pk,
                    from_custodian="S-0001",
                    to_custodian=lead.username,
                    sha256=w.sha256,
                    hash_result="match",
                )
                for pk, w in zip(item_pks, written, strict=True)
            ],
            actor=lead,
            action="evidence.intake",
            case=case,
            items=refs,
        )
    total = sum(w.size for w in written)
    print(
        f"{args.photos} photos, {total / 1e9:.2f} GB stored in {time.perf_counter() - start:.1f} s"
    )

    package = services.request_package(
        actor=lawyer, case=case, recipient="A court (bench)", purpose="investigation"
    )
    package = services.approve_package(actor=lead, package=package)
    files = [Path(store.path(w.key)) for w in written]

    first = floor(files, tmp / "floor")
    start = time.perf_counter()
    package = services.run_build(services.start_build(actor=lead, package=package), out=tmp / "bag")
    build_s = time.perf_counter() - start
    second = floor(files, tmp / "floor")
    floor_s = min(first, second)
    assert package.status == "ready", package.error
    ratio = build_s / floor_s
    print(f"floor runs: {first:.2f} s, {second:.2f} s; build: {build_s:.2f} s")
    print(
        f"photos={args.photos} bytes={total} build_s={build_s:.2f} floor_s={floor_s:.2f} "
        f"ratio={ratio:.2f}"
    )
    met = ratio < GOAL
    print(f"goal (build under {GOAL:.0f}x the floor): {'met' if met else 'NOT met'}")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
