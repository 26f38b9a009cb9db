"""manage.py ingest PATH --case REF --source "..." : take in a folder tree or a ZIP."""

import json as jsonlib
import os
import sys
import time
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from casefiles.access import Action, can
from evidence.duplicates import duplicates_in
from evidence.intake.pipeline import ingest_path
from evidence.intake.sources import iter_manifest, zip_encoding_name

from ._common import get_case, get_operator


class Progress:
    """count, rate and ETA on one line of a terminal; silent elsewhere."""

    def __init__(self, stream):
        self.stream, self.last = stream, 0.0
        self.enabled = stream.isatty()

    def __call__(self, n: int, total: int, elapsed: float) -> None:
        now = time.monotonic()
        if not self.enabled or (now - self.last < 0.2 and n != total):
            return
        self.last = now
        rate = n / elapsed if elapsed else 0
        eta = (total - n) / rate if rate else 0
        width = 30
        filled = int(width * n / total) if total else width
        bar = "#" * filled + "-" * (width - filled)
        self.stream.write(
            f"\r[{bar}] {n}/{total} {rate:6.1f} files/s ETA {int(eta) // 60}:{int(eta) % 60:02d} "
        )
        self.stream.flush()
        if n == total:
            self.stream.write("\n")


class Command(BaseCommand):
    help = "Take in a folder tree or a ZIP: hash, store, read metadata, record custody."

    def add_arguments(self, parser):
        parser.add_argument("path", type=Path)
        parser.add_argument("--case", required=True, help="case reference, e.g. SYR-2014-001")
        parser.add_argument("--source", required=True, help="from whom the medium came")
        parser.add_argument("--medium", default="", help='e.g. "USB stick, SanDisk, S/N 1234"')
        parser.add_argument(
            "--method",
            default="",
            help='how it came into custody, e.g. "handed over in person" '
            "(default: copied from the medium)",
        )
        parser.add_argument("--manifest", type=Path, help="custodian's sha256sum/md5sum list")
        parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
        parser.add_argument("--json", action="store_true", help="print the summary as JSON")
        parser.add_argument("--as", dest="username", help="the investigator taking it in")
        parser.add_argument("--new-batch", action="store_true", help="do not resume")
        parser.add_argument(
            "--graphic",
            action="store_true",
            help="mark every item of the batch graphic (shown blurred until revealed)",
        )
        parser.add_argument(
            "--zip-encoding",
            help="encoding of ZIP names written without the UTF-8 flag, when known "
            "(e.g. cp720 for Arabic Windows Explorer, cp1256); otherwise they are flagged",
        )

    def handle(
        self,
        *args,
        path,
        case,
        source,
        medium,
        method,
        manifest,
        jobs,
        json,
        username,
        new_batch,
        zip_encoding,
        graphic,
        **options,
    ):
        if not path.exists():
            raise CommandError(f"{path} does not exist.")
        if zip_encoding:
            try:
                zip_encoding = zip_encoding_name(zip_encoding)
            except ValueError as exc:
                raise CommandError(str(exc)) from None
        if manifest is not None:
            if not manifest.is_file():
                raise CommandError(f"manifest {manifest} is not a file.")
            try:  # read now: a list that is none opens no batch
                list(iter_manifest(manifest))
            except ValueError as exc:
                raise CommandError(f"manifest {manifest}: {exc}") from None
        case_obj = get_case(case)
        actor = get_operator(username)
        if not can(actor, Action.ADD_EVIDENCE, case_obj):
            raise CommandError(f"{actor} may not add evidence to {case}.")
        try:
            report = ingest_path(
                actor=actor,
                case=case_obj,
                path=path,
                acquired_from=source,
                medium=medium,
                method=method,
                jobs=max(1, jobs),
                custodian_manifest=manifest,
                progress=Progress(sys.stderr),
                new_batch=new_batch,
                zip_encoding=zip_encoding,
                graphic=graphic,
            )
        except (ValueError, RuntimeError) as exc:
            raise CommandError(str(exc)) from exc
        batch = report.batch
        summary = {
            "batch": batch.pk,
            "case": case,
            "seen": batch.seen,
            "stored": batch.stored,
            "duplicate": batch.duplicate,
            "flagged": batch.flagged,
            "failed": batch.failed,
            "skipped": batch.skipped,
            "new_items": report.new_items,
            "already_done": report.already_done,
            "elapsed_s": round(report.elapsed, 3),
            "photos_per_s": round(report.files_per_s, 1),
            "coordinator_cpu_s": round(os.times().user + os.times().system, 2),
            "manifest_sha256": batch.manifest.sha256 if batch.manifest else None,
            "graphic": batch.graphic,
        }
        checked = _custodian_list(batch) if manifest is not None else None
        if checked is not None:
            summary["custodian_manifest"] = checked
        # Each duplicate and the earlier item of the case holding its bytes: one query.
        duplicates = [
            {
                "item": d["reference"],
                "path": d["original_path"],
                "same_as": d["same_as"],
                "same_as_path": d["same_as_path"],
            }
            for d in duplicates_in(batch, actor)
        ]
        summary["duplicates"] = duplicates
        if json:
            self.stdout.write(jsonlib.dumps(summary))
        else:
            self.stdout.write(
                f"batch {batch.pk}: {batch.seen} seen, {batch.stored} stored, "
                f"{batch.duplicate} duplicate, {batch.flagged} flagged, {batch.failed} failed, "
                f"{batch.skipped} skipped; {report.new_items} new in {report.elapsed:.1f} s "
                f"({report.files_per_s:.1f} files/s); manifest sha256 {summary['manifest_sha256']}"
                + ("; every item marked graphic" if batch.graphic else "")
            )
            if checked is not None:
                self._write_custodian_list(checked)
            for d in duplicates:
                if d["same_as"]:
                    earlier = f"the same bytes as {d['same_as']} ({d['same_as_path']})"
                else:
                    earlier = "the same bytes as an earlier item of the case"
                self.stdout.write(
                    f"  duplicate: {d['path']} ({d['item']}): {earlier}, taken in before"
                )
        for problem in batch.problems:
            self.stderr.write(f"  {problem['kind']}: {problem['path']}: {problem['reason']}")
        if batch.failed:
            raise CommandError(f"{batch.failed} file(s) could not be stored.", returncode=2)

    def _write_custodian_list(self, checked: dict) -> None:
        self.stdout.write(
            f"custodian's list: {len(checked['match'])} match, "
            f"{len(checked['mismatch'])} MISMATCH, "
            f"{len(checked['missing'])} listed but not received, "
            f"{len(checked['unlisted'])} received but not listed"
        )
        for entry in checked["mismatch"]:
            self.stdout.write(
                f"  MISMATCH: {entry['path']}: {entry['algorithm']} listed {entry['expected']}, "
                f"received {entry['actual'] or 'not computed'} ({entry['item']})"
            )
        for path in checked["missing"]:
            self.stdout.write(f"  listed, not received: {path}")
        for entry in checked["unlisted"]:
            self.stdout.write(f"  received, not listed: {entry['path']} ({entry['item']})")


def _custodian_list(batch) -> dict:
    """What the custodian's checksum list said against what arrived, line by line."""
    checked: dict[str, list] = {"match": [], "mismatch": [], "missing": [], "unlisted": []}
    entries = batch.manifest_entries.select_related("item").order_by("result", "path", "pk")
    for entry in entries:
        item = entry.item.reference if entry.item else None
        if entry.result == "missing":
            checked["missing"].append(entry.path)
        elif entry.result == "unlisted":
            checked["unlisted"].append({"path": entry.path, "item": item})
        else:
            checked[entry.result].append(
                {
                    "path": entry.path,
                    "item": item,
                    "algorithm": entry.algorithm,
                    "expected": entry.expected,
                    "actual": entry.actual,
                }
            )
    return checked
