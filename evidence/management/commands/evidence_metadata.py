"""manage.py evidence_metadata --case REF --as USER [--format jsonl|csv]: one record per
item. A bulk copy of case data leaves the server: it is done as a named member who may
download originals, and audited before the first record is written."""

import csv
import json

from django.core.management.base import BaseCommand, CommandError

from casefiles import audit
from casefiles.access import Action, can
from casefiles.exports import csv_cell
from evidence.models import EvidenceItem
from people.protection import withheld_testimonies

from ._common import get_case, get_operator

FIELDS = [
    "reference",
    "original_path",
    "sha256",
    "size",
    "media_type",
    "date_taken",
    "camera_make",
    "camera_model",
    "gps_latitude",
    "gps_longitude",
    "orientation",
    "flags",
]


def exported_items(case, actor):
    """The items the export writes: every item of the case but those attached to a
    statement ``actor`` may not read (``attachment_refusal``), whose metadata (the
    camera, the time and place of a recording) is the statement's."""
    return EvidenceItem.objects.filter(case=case).exclude(
        testimony__in=withheld_testimonies(actor, case)
    )


def records(items):
    items = items.select_related("original", "provenance").order_by("reference")
    for item in items.iterator(chunk_size=2000):
        p = getattr(item, "provenance", None)
        yield {
            "reference": item.reference,
            "original_path": item.original_path,
            "sha256": item.original.sha256,
            "size": item.original.size,
            "media_type": item.original.media_type,
            "date_taken": p.taken_at if p else "",
            "camera_make": p.camera_make if p else "",
            "camera_model": p.camera_model if p else "",
            "gps_latitude": float(p.gps_latitude) if p and p.gps_latitude is not None else None,
            "gps_longitude": float(p.gps_longitude) if p and p.gps_longitude is not None else None,
            "orientation": p.orientation if p else None,
            "flags": item.flags,
        }


class Command(BaseCommand):
    help = (
        "Write the metadata of every evidence item of a case to stdout, one record per "
        "item, as JSON lines (the default) or CSV with a header row. Fields: "
        + ", ".join(FIELDS)
        + ". date_taken is the camera clock as recorded in the file (EXIF "
        "DateTimeOriginal, as written there); GPS is in decimal degrees; flags are why "
        "intake flagged the file. No file content is written. Items attached to a testimony "
        "whose statement the account may not read are left out (named on stderr). Run as "
        "a member of the case "
        "who may download originals (a lead, investigator or lawyer); the export is "
        "recorded in the audit log before the first record is written."
    )

    def add_arguments(self, parser):
        parser.add_argument("--case", required=True, help="the case's reference, e.g. SYR-2014-001")
        parser.add_argument(
            "--format",
            choices=["jsonl", "csv"],
            default="jsonl",
            help="jsonl: one JSON object per line (default); csv: a header row, then a row "
            "per item",
        )
        parser.add_argument(
            "--as",
            dest="username",
            required=True,
            help="the account exporting: a lead, investigator or lawyer of the case",
        )

    def handle(self, *args, case, format, username, **options):
        case_obj = get_case(case)
        actor = get_operator(username)
        if not can(actor, Action.DOWNLOAD_ORIGINAL, case_obj):
            raise CommandError(f"{actor} may not export the evidence metadata of {case}.")
        items = exported_items(case_obj, actor)
        withheld = list(
            EvidenceItem.objects.filter(case=case_obj)
            .exclude(pk__in=items.values("pk"))
            .order_by("reference")
            .values_list("reference", flat=True)
        )
        audit.record(
            actor,
            "evidence.export_metadata",
            case=case_obj,
            format=format,
            items=items.count(),
            withheld=withheld,
        )
        if withheld:
            self.stderr.write(
                f"{len(withheld)} item(s) attached to a statement {actor} may not read "
                f"left out: {', '.join(withheld)}"
            )
        if format == "csv":
            writer = csv.DictWriter(self.stdout, fieldnames=FIELDS, lineterminator="\n")
            writer.writeheader()
        for record in records(items):
            if format == "csv":
                flags = "; ".join(f"{f['code']}: {f['reason']}" for f in record["flags"])
                writer.writerow({k: csv_cell(v) for k, v in {**record, "flags": flags}.items()})
            else:
                self.stdout.write(json.dumps(record, ensure_ascii=False))
