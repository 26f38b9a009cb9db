"""Benchmark `manage.py ingest` against the floor measured on the same files, same run.

    .venv/bin/python bench/ingest.py [--count 2000] [--jobs N] [--keep]

Generates (once, cached under var/bench/) a deterministic corpus of JPEGs with EXIF —
mostly 1600x1200, every tenth 4000x3000, 0.3-1.5 MB, with a camera-like texture — then:

1. reads the corpus into memory and keeps it mapped there for the whole run;
2. floor: `sha256sum` over all files, then a Pillow draft-decode + 256 px thumbnail of
   each, both spread over all cores;
3. `manage.py ingest` into a fresh data dir and SQLite database, as deployed: DEBUG off
   and the project's modules compiled to bytecode beforehand (as an install does; this
   machine's environment sets PYTHONDONTWRITEBYTECODE, so no run would ever keep them).

Prints photos/s, peak RSS of the ingest process tree, and ingest time / floor time; the
last line reads `photos=N photos_per_s=X ratio_to_floor=R peak_rss_mb=M`.
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
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from PIL import Image

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


def run_ingest(files_root: Path, jobs: int, workdir: Path) -> tuple[float, float, dict]:
    env = {
        **os.environ,
        "ATHAR_DEBUG": "0",  # as deployed: no SQL kept and logged per query
        "ATHAR_DATA_DIR": str(workdir),
        "DATABASE_URL": os.environ.get("BENCH_DATABASE_URL", f"sqlite:///{workdir}/bench.sqlite3"),
    }
    manage = [sys.executable, str(ROOT / "manage.py")]
    subprocess.run([*manage, "migrate", "-v0"], env=env, check=True)
    setup = (
        "from django.contrib.auth.models import Group, User\n"
        "from casefiles.models import Case, Membership\n"
        "u = User.objects.create_user('bench', password=None)\n"
        "u.groups.add(Group.objects.get(name='Investigator'))\n"
        "c = Case.objects.create(reference='BENCH-001', title='Benchmark')\n"
        "Membership.objects.create(user=u, case=c, role='investigator')\n"
    )
    subprocess.run([*manage, "shell", "--no-imports", "-c", setup], env=env, check=True)
    cmd = [*manage, "ingest", str(files_root), "--case", "BENCH-001", "--source", "bench"]
    cmd += ["--as", "bench", "--jobs", str(jobs), "--json"]
    peak = 0
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, text=True)
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=2000)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--keep", action="store_true", help="keep the ingest's data dir")
    args = parser.parse_args()

    files = corpus(args.count, args.jobs)
    for package in ("casefiles", "evidence", "people"):
        compileall.compile_dir(ROOT / package, quiet=1)
    os.sync()  # nothing of an earlier write still on its way to the disk
    settle()
    sizes = [f.stat().st_size for f in files]
    print(
        f"corpus: {len(files)} photos, {sum(sizes) / 1e6:.0f} MB, "
        f"{min(sizes) / 1e6:.2f}-{max(sizes) / 1e6:.2f} MB each"
    )
    with resident(files):
        measure(files, args)


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


def measure(files: list[Path], args: argparse.Namespace) -> None:
    hashed, thumbs = floor_seconds(files, args.jobs)
    floor = hashed + thumbs
    print(
        f"floor: sha256sum {hashed:.2f} s + draft thumbnails {thumbs:.2f} s = {floor:.2f} s "
        f"({len(files) / floor:.0f} photos/s) on {args.jobs} cores"
    )

    workdir = Path(tempfile.mkdtemp(prefix="athar-bench-", dir=CORPUS_ROOT))
    try:
        elapsed, peak_mb, summary = run_ingest(files[0].parent.parent, args.jobs, workdir)
    finally:
        if not args.keep:
            subprocess.run(["rm", "-rf", str(workdir)], check=False)
            os.sync()  # the clean-up's writeback must not run into the next measurement
            CLEANED.write_text(str(time.time()))
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


if __name__ == "__main__":
    main()
