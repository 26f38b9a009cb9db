"""Run the intake steps over many sources in parallel and write results in batches."""

from __future__ import annotations

import codecs
import contextlib
import multiprocessing
import os
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from django.conf import settings

from .. import near_duplicates, services
from ..models import IntakeBatch
from ..storage import evidence_storage
from .payload import IntakeResult, SourceFile
from .sources import Listing, file_sha256, is_archive, iter_manifest, list_source
from .steps import process_many, ready

if TYPE_CHECKING:
    from django.contrib.auth.models import User as Account

    from casefiles.models import Case

WRITE_AFTER = 2.0  # seconds between database transactions at most


@dataclass
class RunReport:
    batch: IntakeBatch
    new_items: int
    elapsed: float
    already_done: int

    @property
    def files_per_s(self) -> float:
        return self.new_items / self.elapsed if self.elapsed else 0.0


PER_TASK = 8  # sources a worker takes at a time: their writes overlap their decoding


@contextlib.contextmanager
def workers(jobs: int) -> Iterator[ProcessPoolExecutor | None]:
    """``jobs`` worker processes (None for one: the caller's process does the work),
    started now: each is a fresh interpreter importing the steps, which overlaps what the
    caller does before it has work for them (listing the source, opening the batch)."""
    if jobs <= 1:
        yield None
        return
    # spawn: workers start clean (no inherited database connections or locks).
    ctx = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=jobs, mp_context=ctx) as pool:
        for _ in range(jobs):
            pool.submit(ready)
        try:
            yield pool
        except BaseException:  # a failed write, an interrupt: not the rest of the drive
            pool.shutdown(cancel_futures=True)
            raise


def _results(
    sources: list[SourceFile],
    pool: ProcessPoolExecutor | None,
    extra: tuple[str, ...],
    blurred: bool,
) -> Iterator[IntakeResult]:
    work = partial(
        process_many,
        store=evidence_storage().for_workers(),
        extra_digests=extra,
        blurred=blurred,
    )
    tasks = [sources[i : i + PER_TASK] for i in range(0, len(sources), PER_TASK)]
    if pool is None or len(sources) < 4:
        for task in tasks:
            yield from work(task)
        return
    for results in pool.map(work, tasks):
        yield from results


def run_intake(
    *,
    actor: Account,
    batch: IntakeBatch,
    listing: Listing,
    jobs: int | None = None,
    custodian_manifest: Path | None = None,
    progress: Callable[[int, int, float], None] | None = None,
    name_encoding: str | None = None,
    group_now: bool = True,
    pool: ProcessPoolExecutor | None = None,
) -> RunReport:
    """Take in every source of ``listing`` not yet in ``batch``; resumable at any point.

    ``pool``: worker processes started ahead (``workers``); without it, ``jobs`` of them
    are started here if the work is worth it.

    ``group_now``: place the new images into near-duplicate groups before returning (the
    command line, a background task), a chunk at a time as it is written; False leaves it
    to the caller (a web request queues a task instead).

    ``name_encoding``: that the ZIP's names were read with (None: not a ZIP). Checked,
    once the batch is this run's (no other run can add to it meanwhile), against the
    members already done: a name read another way would be another file, taken in again
    beside the one done. Then recorded, if the batch had none or another."""
    if not services.claim_batch(batch):
        raise RuntimeError(f"batch {batch.pk} is being taken in by {batch.claimed_by}")
    done = services.done_source_keys(batch)
    if name_encoding is not None:
        if not done <= {s.key for s in listing.files}:
            services.release_batch(batch)
            reading = f"--zip-encoding {name_encoding}" if name_encoding else "UTF-8 alone"
            raise ValueError(
                f"batch {batch.pk} took in members of this ZIP under names that {reading} "
                "does not give them (the batch read them as "
                f"{batch.name_encoding or 'UTF-8 alone, or did not say'}). Resume it as it "
                "was first run, or take the archive in again under the new names with "
                "--new-batch."
            )
        if name_encoding != batch.name_encoding:
            services.record_name_encoding(actor=actor, batch=batch, encoding=name_encoding)
    jobs = jobs or os.cpu_count() or 1
    listed = list(iter_manifest(custodian_manifest)) if custodian_manifest else None
    extra = tuple(sorted({alg for alg, _, _ in listed or [] if alg != "sha256"}))
    todo = [s for s in listing.files if s.key not in done]
    problems = list(listing.problems)
    started = time.monotonic()
    chunk: list[IntakeResult] = []
    written = 0
    last_write = started

    def flush() -> None:
        nonlocal chunk, written, last_write
        problems.extend(
            {"path": r.source.path, "kind": "failed", "reason": r.error}
            for r in chunk
            if not r.stored
        )
        written += services.record_intake(
            actor=actor,
            case=batch.case,
            batch=batch,
            results=chunk,
            acquired_from=batch.acquired_from,
            method=batch.method,
            medium=batch.medium,
            medium_serial=batch.medium_serial,
            problems=problems,
            total=len(listing.files) + len(listing.problems),
        )
        chunk = []
        if group_now:  # while the workers decode on: the run's end waits for one chunk's
            near_duplicates.group_near_duplicates(batch.case)
        last_write = time.monotonic()

    with contextlib.ExitStack() as stack:
        if pool is None and len(todo) >= 4:
            pool = stack.enter_context(workers(jobs))
        for n, result in enumerate(_results(todo, pool, extra, batch.graphic), 1):
            chunk.append(result)
            if len(chunk) >= settings.INTAKE_CHUNK or time.monotonic() - last_write > WRITE_AFTER:
                flush()
            if progress:
                progress(n, len(todo), time.monotonic() - started)
    if chunk or not todo:
        flush()
    services.finish_batch(
        actor=actor,
        batch=batch,
        problems=problems,
        total=len(listing.files) + len(listing.problems),
        custodian_manifest=listed,
        custodian_manifest_text=custodian_manifest.read_bytes() if custodian_manifest else None,
    )
    return RunReport(batch, written, time.monotonic() - started, len(done))


def ingest_path(
    *,
    actor: Account,
    case: Case,
    path: Path,
    acquired_from: str,
    medium: str = "",
    method: str = "",
    jobs: int | None = None,
    custodian_manifest: Path | None = None,
    progress: Callable[[int, int, float], None] | None = None,
    new_batch: bool = False,
    zip_encoding: str | None = None,
    graphic: bool = False,
) -> RunReport:
    """The command-line entry point: a folder tree or a ZIP (resumes an earlier run).

    ``zip_encoding``: of a ZIP's names written without the UTF-8 flag, if known.
    ``graphic``: every item of the batch is marked graphic as it is written (a batch
    resumed that was opened without it is marked so first, with the items it holds)."""
    # The workers start first: their start overlaps the listing and the batch's opening.
    with workers(jobs or os.cpu_count() or 1) as pool:
        source_root = str(path.resolve())
        evidence_storage().clean_stale_temp_files()  # left by writers killed long ago
        zipped = is_archive(path.name, path)
        if zip_encoding:
            zip_encoding = codecs.lookup(zip_encoding).name  # CP720 and cp720 are one
        listing = list_source(path, evidence_storage().free_space(), zip_encoding)
        where: dict[str, Any] = dict(
            case=case, source_root=source_root, acquired_from=acquired_from, medium=medium
        )
        batch = None if new_batch else services.resumable_batch(**where, files=listing.files)
        if batch is None:
            source_sha256, source_size = "", None
            if path.is_file():  # the archive or file as handed over: its own hash, first
                source_sha256, source_size = file_sha256(path)
            batch = services.open_batch(
                **where,
                resume_files=None if new_batch else listing.files,
                actor=actor,
                source_sha256=source_sha256,
                source_size=source_size,
                method=method or services.METHOD_COPIED,
                name_encoding=(zip_encoding or "") if zipped else "",
                graphic=graphic,
            )
        if graphic and not batch.graphic:
            services.mark_batch_graphic(actor=actor, batch=batch)
        if zipped and zip_encoding is None and batch.name_encoding:
            # The same command run again without --zip-encoding: the batch's own (a batch
            # found, or one another run opened a moment ago).
            zip_encoding = batch.name_encoding
            listing = list_source(path, evidence_storage().free_space(), zip_encoding)
        return run_intake(
            actor=actor,
            batch=batch,
            listing=listing,
            custodian_manifest=custodian_manifest,
            progress=progress,
            name_encoding=(zip_encoding or "") if zipped else None,
            pool=pool,
        )
