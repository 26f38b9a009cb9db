"""Re-encrypt every protected identity field under the first key of ATHAR_FIELD_KEYS."""

from django.core.management.base import BaseCommand, CommandError

from people import crypto, services


class Command(BaseCommand):
    help = (
        "Re-encrypt identities under the current (first) key of ATHAR_FIELD_KEYS and "
        "rebuild the name index. Afterwards the older keys may be removed."
    )

    def handle(self, *args, **options):
        try:
            report = services.rotate_field_keys()
        except crypto.DecryptionError as exc:
            raise CommandError(f"nothing changed: a stored value does not open ({exc})") from exc
        self.stdout.write(
            f"{report.people} people, {report.reencrypted} re-encrypted from older keys; "
            f"all under key {report.key_id}"
        )
