import os
from pathlib import Path

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from casefiles import checkpoints, services
from casefiles.audit import verify_chain
from casefiles.timestamps import TimestampError


def _point_latest_at(out: Path, where: Path) -> None:
    """``<out>/latest`` names the newest checkpoint folder (a relative symbolic link,
    replaced atomically), so that commands and docs can name it without its size."""
    try:
        current = int((out / "latest").readlink().name.removeprefix("checkpoint-"))
    except (OSError, ValueError):
        current = -1
    if current > int(where.name.removeprefix("checkpoint-")):
        return  # an older checkpoint written again: latest stays on the newest
    tmp = out / f".latest-{os.getpid()}"
    tmp.unlink(missing_ok=True)
    tmp.symlink_to(where.name)
    tmp.replace(out / "latest")


class Command(BaseCommand):
    help = (
        "Sign the Merkle root of the audit log so far (Ed25519) and write the checkpoint "
        "where it can be published. See docs/audit-checkpoints.md."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--out",
            type=Path,
            default=None,
            help="directory for the published files (default: $ATHAR_DATA_DIR/checkpoints)",
        )

    def handle(self, *args, **options):
        report = verify_chain()
        if not report.ok:  # never sign a broken chain
            raise CommandError(report.summary(), returncode=1)
        try:
            row, consistency = services.create_audit_checkpoint(actor=None)
        except ValidationError as exc:
            raise CommandError(" ".join(exc.messages)) from exc
        except (TimestampError, OSError) as exc:  # nothing was stored
            raise CommandError(f"timestamp authority at {settings.ATHAR_TSA_URL}: {exc}") from exc
        out = options["out"] or settings.DATA_DIR / "checkpoints"
        where = checkpoints.write_files(out, checkpoints.bundle(row, consistency))
        _point_latest_at(Path(out), Path(where))
        self.stdout.write(f"checkpoint {row.origin} size {row.size} root {row.root}")
        if row.timestamp_reply:
            self.stdout.write("timestamped by the configured authority (checkpoint.tsr)")
        self.stdout.write(f"written to {where}")
