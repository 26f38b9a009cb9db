"""Benchmark `manage.py ingest` against the floor measured on the same files, same run.

    .venv/bin/python bench/ingest.py [--count 2000] [--jobs N] [--keep] [--similar]

Generates (once, cached under var/bench/) a deterministic corpus of JPEGs with EXIF —
mostly 1600x1200, every tenth 4000x3000, 0.3-1.5 MB, with a camera-like texture — then:

1. reads the corpus into memory and keeps it mapped there for the whole run;
2. floor: `sha256sum` over all files, then a Pillow draft-decode + 256 px thumbnail of
   each, both spread over all cores;
3. `manage.py ingest` into a fresh data dir and SQLite database, as deployed: DEBUG off
   and the project's modules compiled to bytecode beforehand (as an install does; this
   machine's environment sets PYTHONDONTWRITEBYTECODE, so no run would ever keep them).

Prints photos/s, peak RSS of the ingest process tree, and ingest time / floor time; the
line after reads `photos=N photos_per_s=X ratio_to_floor=R peak_rss_mb=M`.

`--similar` then does the same with a second corpus (also made once): near-identical
photos, several of each subject, every subject framed the same way (as a morgue's
photographs are), the sizes and noise of the first. COUNT of them are taken into a case
first (the archive held), then COUNT more are measured: half of them more shots of held
subjects, half new subjects (`--ordinary-count N`: the ordinary corpus compared with has N
photos, made sooner than COUNT). After each corpus, one photo is uploaded in the browser's
way (through the upload view) into that case and timed. The ordinary corpus is measured
again after the similar one (the load may change) and the mean compared with; the last
line reads `similar_photos_per_s=X ordinary_photos_per_s=Y ... similar_to_ordinary=R
upload_s=S`.
"""

from __future__ import annotations

import argparse
import compileall
import contextlib
import io
import json
import mmap
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
import tomllib
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from PIL import Image, ImageDraw, ImageFilter

ROOT = Path(__file__).resolve().parent.parent
CORPUS_ROOT = ROOT / "var" / "bench"


def make_photo(n: int) -> bytes:
    rnd = random.Random(n)
    big = n % 10 == 9
    size = (4000, 3000) if big else (1600, 1200)
    # Low-frequency scene (upscaled coarse colour field) plus sensor-like noise.
    coarse = Image.frombytes(
        "RGB", (40, 30), bytes(rnd.randrange(40, 220) for _ in range(40 * 30 * 3))
    )
    scene = coarse.resize(size, Image.Resampling.BICUBIC)
    noise = Image.effect_noise(size, rnd.uniform(18, 40)).convert("RGB")
    # Big frames carry less noise per pixel, as a sensor's larger photosites do.
    img = Image.blend(scene, noise, rnd.uniform(0.09, 0.13) if big else rnd.uniform(0.18, 0.30))
    exif = Image.Exif()
    exif[271] = rnd.choice(["Canon", "NIKON CORPORATION", "FUJIFILM"])
    exif[272] = rnd.choice(["EOS 40D", "D70", "FinePix E500"])
    exif[274] = rnd.choice([1, 1, 1, 6, 8, 3])
    exif.get_ifd(0x8769)[36867] = (
        f"2013:{rnd.randint(1, 12):02d}:{rnd.randint(1, 28):02d} "
        f"{rnd.randint(0, 23):02d}:{rnd.randint(0, 59):02d}:{rnd.randint(0, 59):02d}"
    )
    gps = exif.get_ifd(0x8825)
    gps[1], gps[2] = "N", (33.0, float(rnd.randint(0, 59)), float(rnd.randint(0, 59)))
    gps[3], gps[4] = "E", (36.0, float(rnd.randint(0, 59)), float(rnd.randint(0, 59)))
    out = io.BytesIO()
    img.save(out, "JPEG", quality=75 if big else 88, exif=exif)
    return out.getvalue()


# -- the similar corpus: near-identical photos, several of each subject ------------------
SHOTS = 6  # photos of each subject in the archive held; a new batch adds 3 more to half


def similar_subject(n: int, count: int) -> tuple[int, int]:
    """(subject, shot) of photo ``n`` of a similar corpus of ``count`` held + ``count`` new.

    The first ``count`` are the archive already held: SHOTS photos of each subject. Of the
    next ``count``, half are three more photos of each held subject (taken again, later),
    half are new subjects, SHOTS photos each."""
    if n < count:
        return divmod(n, SHOTS)
    m = n - count
    if m < count // 2:
        subject, shot = divmod(m, 3)
        return subject, SHOTS + shot
    subject, shot = divmod(m - count // 2, SHOTS)
    return (count + SHOTS - 1) // SHOTS + subject, shot


_NOISE: dict[tuple[int, int], Image.Image] = {}


def _noise(size: tuple[int, int], rnd: random.Random) -> Image.Image:
    """Sensor-like noise of ``size``: a crop of a larger field made once per process (as
    noisy as the ordinary corpus's, at a fraction of its cost to make)."""
    w, h = size
    if size not in _NOISE:
        _NOISE[size] = Image.effect_noise((w + 256, h + 256), 30).convert("RGB")
    x, y = rnd.randrange(256), rnd.randrange(256)
    return _NOISE[size].crop((x, y, x + w, y + h))


def make_similar_photo(n: int, count: int) -> bytes:
    """Photo ``n``: every subject framed the same way (a body lying on a floor, a numbered
    card in the corner), each shot with the camera a little moved and the light a little
    changed: the sizes and noise of the ordinary corpus, the sameness of a morgue's."""
    subject, _ = similar_subject(n, count)
    srnd = random.Random(f"subject-{subject}")
    prnd = random.Random(f"photo-{n}")
    big = n % 10 == 9
    size = (4000, 3000) if big else (1600, 1200)
    w, h = 160, 120
    floor = srnd.randrange(50, 80)
    field = Image.frombytes("L", (16, 12), bytes(srnd.randrange(256) for _ in range(16 * 12)))
    field = field.resize((w, h), Image.Resampling.BICUBIC)
    scene = Image.eval(field, lambda v: floor - 14 + v * 28 // 255).convert("RGB")
    draw = ImageDraw.Draw(scene)
    cx, cy = 80 + srnd.randint(-8, 8), 64 + srnd.randint(-6, 6)
    rx, ry = 52 + srnd.randint(-8, 8), 18 + srnd.randint(-4, 4)
    tone = srnd.randrange(140, 200)
    draw.ellipse((cx - rx, cy - ry, cx + rx, cy + ry), fill=(tone, tone - 20, tone - 35))
    hx = cx - rx - 8
    draw.ellipse((hx - 10, cy - 10, hx + 10, cy + 10), fill=(tone, tone - 25, tone - 40))
    draw.rectangle((6, 6, 40, 26), fill=(235, 235, 230))
    draw.text((10, 10), f"{subject:05d}", fill=(20, 20, 20))
    scene = scene.filter(ImageFilter.GaussianBlur(1.2))
    dx, dy, scale = prnd.uniform(-1, 1), prnd.uniform(-1, 1), prnd.uniform(0.99, 1.01)
    scene = scene.transform(
        (w, h), Image.Transform.AFFINE, (scale, 0, dx, 0, scale, dy), Image.Resampling.BILINEAR
    )
    gain = prnd.uniform(0.94, 1.06)
    scene = Image.eval(scene, lambda v: min(255, int(v * gain)))
    scene = scene.resize(size, Image.Resampling.BICUBIC)
    img = Image.blend(
        scene, _noise(size, prnd), prnd.uniform(0.09, 0.13) if big else prnd.uniform(0.18, 0.30)
    )
    exif = Image.Exif()
    exif[271], exif[272], exif[274] = "Canon", "EOS 40D", 1
    exif.get_ifd(0x8769)[36867] = f"2013:08:{1 + subject % 28:02d} 10:{n % 60:02d}:00"
    out = io.BytesIO()
    img.save(out, "JPEG", quality=75 if big else 88, exif=exif)
    return out.getvalue()


def _write_similar(args: tuple[int, int, str]) -> int:
    n, count, path = args
    data = make_similar_photo(n, count)
    Path(path).write_bytes(data)
    return len(data)


def similar_corpus(count: int, jobs: int) -> tuple[Path, Path]:
    """(the archive held, the new batch): folders of ``count`` similar photos each."""
    directory = CORPUS_ROOT / f"similar-v1-{count}"
    parts = (directory / "held", directory / "new")
    files = [
        parts[n >= count] / f"{(n % count) // 1000:03d}" / f"IMG_{n:06d}.jpg"
        for n in range(2 * count)
    ]
    todo = [(n, count, str(p)) for n, p in enumerate(files) if not p.exists()]
    if todo:
        print(f"generating {len(todo)} similar photos into {directory} ...", file=sys.stderr)
        for p in {Path(p).parent for _, _, p in todo}:
            p.mkdir(parents=True, exist_ok=True)
        with ProcessPoolExecutor(jobs) as pool:
            list(pool.map(_write_similar, todo, chunksize=16))
    return parts


CLEANED = CORPUS_ROOT / ".last-clean-up"
# ext4 without a journal (as on this machine) will not reuse an inode freed in the last
# 60 s, or in the last 6 minutes while its inode table block is dirty (recently_deleted()
# in fs/ext4/ialloc.c): it looks up and skips each such inode for every file it creates.
# The new store's files land in the blocks the previous run's store freed, and creating
# them dirties those blocks, so the 6 minutes apply. Within them, the kernel spent 1.4 s
# more CPU on a 2,000-photo ingest (4.3 s of system time instead of 2.9; perf: most of it
# in recently_deleted and the buffer lookups it makes), which is not what taking in a
# drive costs.
SETTLE_S = 365


def settle() -> None:
    try:
        since = time.time() - float(CLEANED.read_text())
    except (OSError, ValueError):
        return
    if since < SETTLE_S:
        print(f"waiting {SETTLE_S - since:.0f} s after the last run's clean-up", file=sys.stderr)
        time.sleep(SETTLE_S - since)


def _write_photo(args: tuple[int, str]) -> int:
    n, path = args
    data = make_photo(n)
    Path(path).write_bytes(data)
    return len(data)


def corpus(count: int, jobs: int) -> list[Path]:
    directory = CORPUS_ROOT / f"corpus-v1-{count}"
    files = [directory / f"{n // 1000:03d}" / f"IMG_{n:06d}.jpg" for n in range(count)]
    todo = [(n, str(p)) for n, p in enumerate(files) if not p.exists()]
    if todo:
        print(f"generating {len(todo)} photos into {directory} ...", file=sys.stderr)
        for p in {Path(p).parent for _, p in todo}:
            p.mkdir(parents=True, exist_ok=True)
        with ProcessPoolExecutor(jobs) as pool:
            list(pool.map(_write_photo, todo, chunksize=16))
    return files


def _thumbnail(path: str) -> None:
    with Image.open(path) as img:
        img.draft("RGB", (256, 256))
        img.thumbnail((256, 256))


def floor_seconds(files: list[Path], jobs: int) -> tuple[float, float]:
    started = time.perf_counter()
    groups = [files[i::jobs] for i in range(jobs)]
    procs = [
        subprocess.Popen(["sha256sum", *map(str, g)], stdout=subprocess.DEVNULL) for g in groups
    ]
    for p in procs:
        p.wait()
    hashed = time.perf_counter() - started
    started = time.perf_counter()
    with ProcessPoolExecutor(jobs) as pool:
        list(pool.map(_thumbnail, map(str, files), chunksize=16))
    return hashed, time.perf_counter() - started


PAGE_KB = os.sysconf("SC_PAGE_SIZE") // 1024
HAS_CHILDREN_LISTS = Path(f"/proc/{os.getpid()}/task/{os.getpid()}/children").exists()


def _descendants_by_walk(pid: int) -> list[int]:
    """Every process under ``pid``, from the parent of each entry of /proc (~4 ms here)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                ppid = int(Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry))
    found, stack = [], [pid]
    while stack:
        p = stack.pop()
        found.append(p)
        stack.extend(children.get(p, []))
    return found


def _descendants(pid: int) -> list[int]:
    """Every process under ``pid``, from each thread's list of children (~0.2 ms)."""
    if not HAS_CHILDREN_LISTS:
        return _descendants_by_walk(pid)
    found, stack = [], [pid]
    while stack:
        p = stack.pop()
        found.append(p)
        try:
            for task in os.listdir(f"/proc/{p}/task"):
                with contextlib.suppress(OSError):
                    stack.extend(
                        map(int, Path(f"/proc/{p}/task/{task}/children").read_text().split())
                    )
        except OSError:
            pass
    return found


def _tree_rss_kb(pid: int) -> int:
    """Resident memory of a process and all its descendants, from /proc."""
    total = 0
    for p in _descendants(pid):
        with contextlib.suppress(OSError, IndexError, ValueError):
            total += int(Path(f"/proc/{p}/statm").read_text().split()[1]) * PAGE_KB
    return total


def _env(workdir: Path) -> dict[str, str]:
    return {
        **os.environ,
        "ATHAR_DEBUG": "0",  # as deployed: no SQL kept and logged per query
        "ATHAR_DATA_DIR": str(workdir),
        "DATABASE_URL": os.environ.get("BENCH_DATABASE_URL", f"sqlite:///{workdir}/bench.sqlite3"),
    }


MANAGE = [sys.executable, str(ROOT / "manage.py")]


def set_up(workdir: Path) -> None:
    """A fresh database in ``workdir`` with the case BENCH-001 and its investigator."""
    env = _env(workdir)
    subprocess.run([*MANAGE, "migrate", "-v0"], env=env, check=True)
    setup = (
        "from django.contrib.auth.models import Group, User\n"
        "from casefiles.models import Case, Membership\n"
        "u = User.objects.create_user('bench', password=None)\n"
        "u.groups.add(Group.objects.get(name='Investigator'))\n"
        "c = Case.objects.create(reference='BENCH-001', title='Benchmark')\n"
        "Membership.objects.create(user=u, case=c, role='investigator')\n"
    )
    subprocess.run([*MANAGE, "shell", "--no-imports", "-c", setup], env=env, check=True)


def run_ingest(files_root: Path, jobs: int, workdir: Path) -> tuple[float, float, dict]:
    """`manage.py ingest` of ``files_root`` into BENCH-001: (wall s, peak RSS MB, summary)."""
    cmd = [*MANAGE, "ingest", str(files_root), "--case", "BENCH-001", "--source", "bench"]
    cmd += ["--as", "bench", "--jobs", str(jobs), "--json"]
    peak = 0
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, env=_env(workdir), stdout=subprocess.PIPE, text=True)
    stop = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not stop.is_set():
            peak = max(peak, _tree_rss_kb(proc.pid))
            time.sleep(0.25)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    out, _ = proc.communicate()
    elapsed = time.perf_counter() - started
    stop.set()
    sampler.join()
    if proc.returncode != 0:
        sys.exit(f"ingest failed with exit code {proc.returncode}")
    return elapsed, peak / 1024, json.loads(out.strip().splitlines()[-1])


# A browser upload of one photo into BENCH-001 through the upload view (the test client,
# signed in with a second factor as a person would be), timed; then the grouping task it
# queued, run as `manage.py db_worker` runs it; then, for scale, the from-scratch grouping
# of the whole case that every intake used to run (inside that request, too).
UPLOAD = """
import json, os, time
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse
from django_otp import DEVICE_ID_SESSION_KEY
from django_otp.plugins.otp_totp.models import TOTPDevice
from django_tasks_db.models import DBTaskResult
from casefiles.models import Case
from evidence import near_duplicates, tasks
from evidence.models import EvidenceItem

user = User.objects.get(username="bench")
device = TOTPDevice.objects.create(user=user, name="bench", confirmed=True)
client = Client(HTTP_HOST="localhost")
client.force_login(user)
session = client.session
session[DEVICE_ID_SESSION_KEY] = device.persistent_id
session.save()
case = Case.objects.get(reference="BENCH-001")
url = reverse("evidence:upload", args=["BENCH-001"])
timings = []
for name in ("warm-up.jpg", "one-more.jpg"):  # the first loads what a running server has
    data = open(os.path.join(os.environ["BENCH_DIR"], name), "rb").read()
    photo = SimpleUploadedFile(name, data, "image/jpeg")
    started = time.perf_counter()
    response = client.post(url, {"files": [photo], "acquired_from": "bench"})
    timings.append(time.perf_counter() - started)
    assert response.status_code == 302, response.status_code
first_s, upload_s = timings
queued = DBTaskResult.objects.filter(task_path=tasks.group_near_duplicates.module_path)
started = time.perf_counter()
for result in queued:
    tasks.group_near_duplicates.call(*result.args_kwargs["args"])
task_s = time.perf_counter() - started
item = EvidenceItem.objects.get(case=case, original_filename="one-more.jpg")
rows = list(EvidenceItem.objects.filter(case=case, phash__isnull=False).values_list("pk", "phash"))
started = time.perf_counter()
groups = near_duplicates.near_groups_from_scratch(rows)
scratch_s = time.perf_counter() - started
print(json.dumps({
    "items": EvidenceItem.objects.filter(case=case).count(),
    "upload_s": upload_s,
    "first_s": first_s,
    "task_s": task_s,
    "grouped_with": len(groups.get(item.near_group, [])),
    "groups": len(groups),
    "in_groups": sum(map(len, groups.values())),
    "largest_group": max(map(len, groups.values()), default=0),
    "from_scratch_s": scratch_s,
}))
"""


def one_file_upload(workdir: Path, photo: Path) -> dict:
    """Upload re-encoded copies of ``photo`` (more shots of its subject) into BENCH-001: a
    first to warm the process up, then the one timed."""
    with Image.open(photo) as img:
        for name, quality in (("warm-up.jpg", 70), ("one-more.jpg", 80)):
            img.save(workdir / name, "JPEG", quality=quality, exif=img.info.get("exif", b""))
    done = subprocess.run(
        [*MANAGE, "shell", "--no-imports", "-c", UPLOAD],
        env={**_env(workdir), "BENCH_DIR": str(workdir)},
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        sys.exit(f"the upload failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def product_packages() -> list[str]:
    """Every package of the product (those the layers contract names), as an install
    compiles them: a package left out would be compiled on each start of the command."""
    with (ROOT / "pyproject.toml").open("rb") as fh:
        return tomllib.load(fh)["tool"]["importlinter"]["root_packages"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=2000)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--keep", action="store_true", help="keep the ingest's data dir")
    parser.add_argument(
        "--ordinary-count",
        type=int,
        help="with --similar: photos of the ordinary corpus to compare with (default COUNT)",
    )
    parser.add_argument(
        "--similar",
        action="store_true",
        help="also COUNT near-identical photos into a case already holding COUNT of them, "
        "compared with the ordinary corpus; and a one-file upload into each case",
    )
    args = parser.parse_args()

    files = corpus(args.ordinary_count or args.count, args.jobs)
    similar = similar_corpus(args.count, args.jobs) if args.similar else None
    for package in product_packages():
        compileall.compile_dir(ROOT / package, quiet=1)
    os.sync()  # nothing of an earlier write still on its way to the disk
    settle()
    sizes = [f.stat().st_size for f in files]
    print(
        f"corpus: {len(files)} photos, {sum(sizes) / 1e6:.0f} MB, "
        f"{min(sizes) / 1e6:.2f}-{max(sizes) / 1e6:.2f} MB each"
    )
    workdirs: list[Path] = []
    try:
        with resident(files):
            rate = measure(files, args, workdirs)
        if similar is not None:
            similar_rate, upload_s = measure_similar(similar, args, workdirs)
            # The ordinary corpus once more: the machine's load may have changed meanwhile.
            print("the ordinary corpus again, after the similar one:")
            with resident(files):
                again = measure(files, args, workdirs)
            ordinary = (rate + again) / 2
            print(
                f"similar_photos_per_s={similar_rate:.1f} ordinary_photos_per_s={ordinary:.1f} "
                f"(before {rate:.1f}, after {again:.1f}) "
                f"similar_to_ordinary={similar_rate / ordinary:.2f} upload_s={upload_s:.3f}"
            )
    finally:
        if not args.keep:
            for workdir in workdirs:
                subprocess.run(["rm", "-rf", str(workdir)], check=False)
            os.sync()  # the clean-up's writeback must not run into the next measurement
            CLEANED.write_text(str(time.time()))


@contextlib.contextmanager
def resident(files: list[Path]) -> Iterator[None]:
    """The corpus in memory, mapped by this process until the block ends.

    Read once and closed is not enough here: this machine's kernel runs a DAMON scheme that
    pages out file cache nobody mapped and nobody touched for a minute, at up to 128 MB/s
    (/sys/kernel/mm/damon/admin). On 10,000 photos (6 GB) the floor's passes and the ingest
    then read the disk (sha256sum took 148 s instead of 11); both are meant to measure CPU."""
    maps = []
    try:
        for f in files:
            with f.open("rb") as fh:
                flags = mmap.MAP_SHARED | getattr(mmap, "MAP_POPULATE", 0)
                maps.append(mmap.mmap(fh.fileno(), 0, flags=flags, prot=mmap.PROT_READ))
        yield
    finally:
        for m in maps:
            m.close()


def measure(files: list[Path], args: argparse.Namespace, workdirs: list[Path]) -> float:
    """The ordinary corpus into an empty case; returns its photos per second."""
    hashed, thumbs = floor_seconds(files, args.jobs)
    floor = hashed + thumbs
    print(
        f"floor: sha256sum {hashed:.2f} s + draft thumbnails {thumbs:.2f} s = {floor:.2f} s "
        f"({len(files) / floor:.0f} photos/s) on {args.jobs} cores"
    )
    workdir = Path(tempfile.mkdtemp(prefix="athar-bench-", dir=CORPUS_ROOT))
    workdirs.append(workdir)  # removed at the end: no inode freed before the last ingest
    set_up(workdir)
    elapsed, peak_mb, summary = run_ingest(files[0].parent.parent, args.jobs, workdir)
    assert summary["stored"] == len(files), summary
    rate = len(files) / elapsed
    print(
        f"ingest: {elapsed:.2f} s wall ({summary['elapsed_s']:.2f} s in the pipeline), "
        f"{rate:.1f} photos/s, peak RSS {peak_mb:.0f} MB, stored={summary['stored']} "
        f"flagged={summary['flagged']}"
    )
    print(
        f"photos={len(files)} photos_per_s={rate:.1f} ratio_to_floor={elapsed / floor:.2f} "
        f"peak_rss_mb={peak_mb:.0f}"
    )
    if args.similar:
        upload = one_file_upload(workdir, files[0])
        print(
            f"one-file upload into the ordinary case of {upload['items'] - 1}: "
            f"{upload['upload_s']:.3f} s (the first, in a cold process: {upload['first_s']:.3f} s; "
            f"the grouping tasks {upload['task_s']:.3f} s)"
        )
    return rate


def measure_similar(
    parts: tuple[Path, Path], args: argparse.Namespace, workdirs: list[Path]
) -> tuple[float, float]:
    """The similar corpus: the archive held first, then the new batch, measured."""
    held, new = parts
    workdir = Path(tempfile.mkdtemp(prefix="athar-bench-", dir=CORPUS_ROOT))
    workdirs.append(workdir)
    set_up(workdir)
    elapsed, _, summary = run_ingest(held, args.jobs, workdir)
    print(
        f"similar, the archive held: {summary['stored']} photos in {elapsed:.2f} s "
        f"({summary['stored'] / elapsed:.1f} photos/s, not resident: read from the disk)"
    )
    files = sorted(new.rglob("*.jpg"))
    with resident(files):
        hashed, thumbs = floor_seconds(files, args.jobs)
        floor = hashed + thumbs
        print(
            f"similar floor: sha256sum {hashed:.2f} s + draft thumbnails {thumbs:.2f} s = "
            f"{floor:.2f} s ({len(files) / floor:.0f} photos/s)"
        )
        elapsed, peak_mb, summary = run_ingest(new, args.jobs, workdir)
    assert summary["stored"] == len(files), summary
    rate = len(files) / elapsed
    print(
        f"similar ingest into a case of {args.count}: {elapsed:.2f} s wall "
        f"({summary['elapsed_s']:.2f} s in the pipeline), {rate:.1f} photos/s, "
        f"peak RSS {peak_mb:.0f} MB, ratio_to_floor={elapsed / floor:.2f}"
    )
    upload = one_file_upload(workdir, files[0])
    print(
        f"similar case: {upload['groups']} near-duplicate groups holding "
        f"{upload['in_groups']} of {upload['items']} photos (largest {upload['largest_group']}); "
        f"grouping all from scratch takes {upload['from_scratch_s']:.2f} s"
    )
    print(
        f"one-file upload into the similar case of {upload['items'] - 1}: "
        f"{upload['upload_s']:.3f} s (the first, in a cold process: {upload['first_s']:.3f} s); "
        f"the grouping tasks {upload['task_s']:.3f} s (it joined {upload['grouped_with'] - 1} "
        "others)"
    )
    return rate, upload["upload_s"]


if __name__ == "__main__":
    main()
