from django.core.exceptions import ImproperlyConfigured
from django.core.management.base import BaseCommand, CommandError

from casefiles import services


class Command(BaseCommand):
    help = (
        "The organisation's signing keys. 'show' lists every key that has signed "
        "checkpoints or packages (as /keys/ and /.well-known/athar-signing-keys do); "
        "'register' lists the configured ATHAR_CHECKPOINT_KEY now, retiring the previous "
        "key if it changed (a rotation, audited), instead of at its first signature. "
        "See docs/audit-checkpoints.md."
    )

    def add_arguments(self, parser):
        sub = parser.add_subparsers(dest="what", required=True)
        show = sub.add_parser("show", help="list the keys: fingerprint, status, dates of use")
        show.add_argument("--pem", action="store_true", help="print each key's PEM too")
        sub.add_parser("register", help="list the configured key now (a rotation if it changed)")

    def handle(self, *args, **options):
        if options["what"] == "register":
            try:
                row = services.register_signing_key()
            except ImproperlyConfigured as exc:
                raise CommandError(str(exc)) from exc
            self.stdout.write(f"current signing key {row.fingerprint}")
            return
        listing = services.signing_keys_listing()
        if not listing["keys"]:
            self.stdout.write("no key has signed anything yet")
        for key in listing["keys"]:
            retired = f"  retired {key['retired_at']}" if key["retired_at"] else ""
            self.stdout.write(
                f"{key['fingerprint']}  {key['status']}  first used {key['first_used']}  "
                f"last used {key['last_used']}{retired}"
            )
            if options["pem"]:
                self.stdout.write(key["public_key"].rstrip("\n"))
        self.stdout.write(
            f"fingerprint of a key in public-key.pem: {listing['fingerprint_command']}"
        )
