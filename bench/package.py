"""Building a disclosure package of 2,000 camera JPEGs (about 1.5 GB), against a floor
measured in the same run.

    .venv/bin/python bench/package.py [--photos 2000] [--size 750000] [--out-folder]
                                      [--database-url postgres://postgres@127.0.0.1:5432]

Makes a fresh database (PostgreSQL on the server --database-url names, created and
dropped; without it, SQLite under a temporary folder) and data folder, with DEBUG off as
deployed. Makes ``--photos`` distinct JPEGs of about ``--size`` bytes with Pillow (a few
camera-like pictures, each file with its own EXIF: make, model, body serial, date taken,
GPS), takes them in through the real intake pipeline (stored write-once, hashed, EXIF
read, thumbnails made, custody events bound into the audit chain), approves them in
review, then a lawyer requests a package of them all and a lead approves it. Then, timed:

- the floor: ``cp`` of the same stored files into a new folder, then ``sha256sum`` and
  ``sha512sum`` of the copies (three commands, as a person would check a copy);
- the build: ``start_build`` and ``run_build`` as the package's page runs it (access and
  contents checked again, the checkpoint published, the bag's tag files written, the
  custody report rendered from them on the second core while each photo is read once,
  hashed and written into the tar, the self-check, the tar fsynced and stored, an
  exported custody event per item). With ``--out-folder``, the bag is kept as a folder
  too, as ``manage.py disclosure build --out`` does (each photo then written twice).

The floor runs before and after the build; both are printed and the faster is the
ratio's floor (the page cache holds the files for both). The report's render is timed
apart, and so is what the build waited for it once the payload was copied. The last
lines read ``photos=N bytes=B build_s=X floor_s=Y ratio=R`` and whether the goal, a
ratio of at most 1.3, is met (exit 1 if not).
"""

from __future__ import annotations

import argparse
import io
import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GOAL = 1.3
CAMERAS = [
    ("Canon", "Canon EOS 40D"),
    ("NIKON CORPORATION", "NIKON D70"),
    ("FUJIFILM", "FinePix E500"),
    ("PENTAX Corporation", "PENTAX K10D"),
    ("samsung", "SM-G960F"),
    ("Apple", "iPhone 8"),
]
PICTURES = 12  # distinct pictures; every file has its own EXIF, so every file is distinct


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--photos", type=int, default=2000)
    parser.add_argument("--size", type=int, default=750_000, help="bytes per photo, about")
    parser.add_argument("--out-folder", action="store_true", help="keep the bag as a folder")
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


def pictures(size: int) -> list[bytes]:
    """A few camera-like pictures (grain over a gradient, as a sensor gives), JPEG-coded
    at about ``size`` bytes, with no EXIF yet."""
    from PIL import Image, ImageFilter

    width, height = 2000, 1500  # about 750 KB at this grain and quality
    scale = (size / 750_000) ** 0.5
    width, height = int(width * scale), int(height * scale)
    out = []
    for n in range(PICTURES):
        grain = [
            Image.effect_noise((width, height), 60).filter(ImageFilter.GaussianBlur(1.0))
            for _ in range(3)
        ]
        light = Image.linear_gradient("L").rotate(30 * n).resize((width, height))
        picture = Image.blend(Image.merge("RGB", grain), light.convert("RGB"), 0.3)
        buffer = io.BytesIO()
        picture.save(buffer, "JPEG", quality=88)
        out.append(buffer.getvalue())
    return out


def _rational(value: float) -> tuple[float, float, float]:
    """Degrees, minutes and seconds, as EXIF's GPS gives them."""
    degrees = int(value)
    minutes = int((value - degrees) * 60)
    return (float(degrees), float(minutes), round(((value - degrees) * 60 - minutes) * 60, 2))


def with_exif(jpeg: bytes, n: int) -> bytes:
    """``jpeg`` with an EXIF segment of its own: camera, serial, date taken, GPS."""
    from PIL import Image

    make, model = CAMERAS[n % len(CAMERAS)]
    exif = Image.Exif()
    exif[0x010F], exif[0x0110] = make, model
    taken = f"2014:{1 + n % 12:02d}:{1 + n % 28:02d} {n % 24:02d}:{n % 60:02d}:{(7 * n) % 60:02d}"
    exif[0x0132] = taken
    details = exif.get_ifd(0x8769)
    details[0x9003] = taken  # DateTimeOriginal
    details[0xA431] = f"{1_000_000 + n * 7919}"  # BodySerialNumber
    gps = exif.get_ifd(0x8825)
    latitude, longitude = 33.4 + (n % 500) / 1000, 36.2 + (n % 700) / 1000
    gps[1], gps[2] = "N", _rational(latitude)
    gps[3], gps[4] = "E", _rational(longitude)
    payload = exif.tobytes()
    segment = b"\xff\xe1" + (len(payload) + 2).to_bytes(2, "big") + payload
    return jpeg[:2] + segment + jpeg[2:]


def floor(files: list[Path], where: Path) -> float:
    """``cp`` the files into a new folder, then ``sha256sum`` and ``sha512sum`` the copies."""
    shutil.rmtree(where, ignore_errors=True)
    where.mkdir()
    start = time.perf_counter()
    subprocess.run(["cp", "-t", str(where), *map(str, files)], check=True)
    copies = [str(where / f.name) for f in files]
    subprocess.run(["sha256sum", *copies], check=True, stdout=subprocess.DEVNULL)
    subprocess.run(["sha512sum", *copies], check=True, stdout=subprocess.DEVNULL)
    elapsed = time.perf_counter() - start
    shutil.rmtree(where, ignore_errors=True)
    return elapsed


def run(args, tmp: Path) -> int:
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Group

    from casefiles.access import INVESTIGATOR_GROUP, LAWYER_GROUP, Role
    from casefiles.models import Case, Membership
    from disclosure import services
    from evidence.intake.pipeline import ingest_path
    from evidence.models import EvidenceItem
    from evidence.storage import evidence_storage

    users = get_user_model().objects
    lawyer = users.create(username="bench-lawyer")
    lawyer.groups.add(Group.objects.get(name=LAWYER_GROUP))
    lead = users.create(username="bench-lead")
    lead.groups.add(Group.objects.get(name=INVESTIGATOR_GROUP))
    case = Case.objects.create(reference="BENCH-1", title="bench")
    Membership.objects.create(user=lawyer, case=case, role=Role.LAWYER)
    Membership.objects.create(user=lead, case=case, role=Role.LEAD)

    start = time.perf_counter()
    medium = tmp / "medium" / "DCIM" / "100CANON"
    medium.mkdir(parents=True)
    bases = pictures(args.size)
    for n in range(args.photos):
        (medium / f"IMG_{n:04d}.JPG").write_bytes(with_exif(bases[n % len(bases)], n))
    made = time.perf_counter() - start
    start = time.perf_counter()
    ingest_path(actor=lead, case=case, path=tmp / "medium", acquired_from="S-0001", jobs=2)
    shutil.rmtree(tmp / "medium")
    items = EvidenceItem.objects.filter(case=case)
    items.update(review_status="approved")  # the bench's shortcut through review
    total = sum(items.values_list("original__size", flat=True))
    print(
        f"{args.photos} JPEGs made in {made:.1f} s, {total / 1e9:.2f} GB taken in "
        f"{time.perf_counter() - start:.1f} s"
    )

    package = services.request_package(
        actor=lawyer, case=case, recipient="A court (bench)", purpose="investigation"
    )
    package = services.approve_package(actor=lead, package=package)
    store = evidence_storage()
    keys = items.values_list("original__storage_key", flat=True)
    files = [Path(store.path(key)) for key in keys]

    first = floor(files, tmp / "floor")
    start = time.perf_counter()
    out = tmp / "bag" if args.out_folder else None
    package = services.run_build(services.start_build(actor=lead, package=package), out=out)
    build_s = time.perf_counter() - start
    second = floor(files, tmp / "floor")
    floor_s = min(first, second)
    assert package.status == "ready", package.error
    timing = package.timing
    ratio = build_s / floor_s
    print(f"floor (cp + sha256sum + sha512sum): before {first:.2f} s, after {second:.2f} s")
    print(
        f"build: {build_s:.2f} s, of which the payload's copy {timing['copy_s']:.2f} s; "
        f"the report rendered in {timing['render_s']:.2f} s beside it, then waited for "
        f"{timing['waited_s']:.2f} s"
    )
    print(
        f"photos={args.photos} bytes={total} build_s={build_s:.2f} floor_s={floor_s:.2f} "
        f"ratio={ratio:.2f} ratio_before={build_s / first:.2f} ratio_after={build_s / second:.2f} "
        f"render_s={timing['render_s']:.2f}"
    )
    met = ratio <= GOAL
    print(f"goal (build at most {GOAL}x the floor): {'met' if met else 'NOT met'}")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
