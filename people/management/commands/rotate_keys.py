"""Re-encrypt every sealed column of every app under the first key of ATHAR_FIELD_KEYS."""

from django.core.management.base import BaseCommand, CommandError

from people import crypto, services


class Command(BaseCommand):
    help = (
        "Re-encrypt every sealed column (identities, antemortem profiles, ...) under the "
        "current (first) key of ATHAR_FIELD_KEYS and rebuild the name index. Afterwards "
        "the older keys may be removed."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--batch-size",
            type=int,
            default=200,
            help="rows sealed again per transaction (each with its audit entry)",
        )

    def handle(self, *args, **options):
        if options["batch_size"] < 1:
            raise CommandError("--batch-size must be at least 1")
        try:
            report = services.rotate_field_keys(batch_size=options["batch_size"])
        except crypto.DecryptionError as exc:
            raise CommandError(f"nothing changed: a stored value does not open ({exc})") from exc
        for label, rows in report.rows.items():
            self.stdout.write(f"{label}: {rows} rows")
        self.stdout.write(
            f"{sum(report.rows.values())} rows in {report.chunks} chunks, "
            f"{report.reencrypted} re-encrypted from older keys; all under key {report.key_id}"
        )
