from pathlib import Path

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured, ValidationError
from django.core.management.base import BaseCommand, CommandError

from casefiles import services
from casefiles.timestamps import TimestampError


class Command(BaseCommand):
    help = (
        "Sign the Merkle root of the audit log so far (Ed25519) and write the checkpoint "
        "where it can be published. The schedule (manage.py checkpoint_schedule) does the "
        "same every ATHAR_CHECKPOINT_EVERY_MINUTES. See docs/audit-checkpoints.md."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--out",
            type=Path,
            default=None,
            help="directory for the published files (default: $ATHAR_DATA_DIR/checkpoints)",
        )

    def handle(self, *args, **options):
        try:
            row, where = services.publish_audit_checkpoint(out=options["out"])
        except services.BrokenChain as exc:  # never sign a broken chain
            raise CommandError(str(exc), returncode=1) from exc
        except ValidationError as exc:
            raise CommandError(" ".join(exc.messages)) from exc
        except ImproperlyConfigured as exc:  # a retired signing key: nothing was signed
            raise CommandError(str(exc)) from exc
        except (TimestampError, OSError) as exc:  # nothing was stored
            raise CommandError(f"timestamp authority at {settings.ATHAR_TSA_URL}: {exc}") from exc
        self.stdout.write(f"checkpoint {row.origin} size {row.size} root {row.root}")
        if row.timestamp_reply:
            self.stdout.write("timestamped by the configured authority (checkpoint.tsr)")
        self.stdout.write(f"written to {where}")
