import sys
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured, ValidationError
from django.core.management.base import BaseCommand, CommandError

from casefiles import services
from casefiles.models import AuditCheckpoint


class Command(BaseCommand):
    help = (
        "Witnesses' cosignatures of checkpoints. 'add --checkpoint SIZE FILE' verifies each "
        "cosignature line in FILE (C2SP tlog-cosignature) against the witness keys of "
        "ATHAR_WITNESS_KEYS and the checkpoint, stores it (audited) and updates the "
        "checkpoint's published folder. See docs/audit-checkpoints.md."
    )

    def add_arguments(self, parser):
        sub = parser.add_subparsers(dest="what", required=True)
        add = sub.add_parser("add", help="store the cosignature lines of FILE ('-': stdin)")
        add.add_argument("--checkpoint", type=int, required=True, help="the checkpoint's size")
        add.add_argument("file", help="file of cosignature lines, one per line")
        add.add_argument("--out", type=Path, default=None, help="published checkpoints folder")

    def handle(self, *args, **options):
        checkpoint = AuditCheckpoint.objects.filter(size=options["checkpoint"]).first()
        if checkpoint is None:
            raise CommandError(f"no checkpoint of size {options['checkpoint']} is stored")
        try:
            if options["file"] == "-":
                text = sys.stdin.read()
            else:
                text = Path(options["file"]).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise CommandError(f"cannot read {options['file']}: {exc}") from exc
        lines = [line for line in text.splitlines() if line.strip()]
        if not lines:
            raise CommandError(f"{options['file']} holds no cosignature line")
        for line in lines:
            try:
                row = services.add_cosignature(checkpoint, line)
            except (ValidationError, ImproperlyConfigured) as exc:
                message = " ".join(getattr(exc, "messages", [str(exc)]))
                raise CommandError(f"refused: {message}") from exc
            self.stdout.write(
                f"cosigned by {row.witness} at {row.time} (checkpoint {checkpoint.size})"
            )
        where = services.republish_cosignatures(checkpoint, options["out"])
        if where is not None:
            self.stdout.write(f"written to {where / 'checkpoint.cosig'}")
