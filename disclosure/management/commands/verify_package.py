"""manage.py verify_package DIR: check a disclosure package offline (reads nothing from the
database): the bag, the signature, the custody chains, the statements and the audit
proofs; and, given what the recipient holds (the sender's key fingerprint or key, a
witness's key, an earlier checkpoint), who signed it. The same code as the bag's
verify.py, with the same options."""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from disclosure import verifier


class Command(BaseCommand):
    help = (
        "Check a disclosure package's bag, signature, custody chains, statements and audit "
        "proofs; with --key-fingerprint (or --trusted-key), that the sender you expect "
        "signed it; with --witness-key, that witnesses cosigned its checkpoint; with "
        "--previous-checkpoint, that its checkpoint extends one you hold."
    )
    requires_system_checks: list[str] = []
    requires_migrations_checks = False

    def add_arguments(self, parser):
        parser.add_argument("bag", type=Path, help="the package's folder (holding bagit.txt)")
        verifier.add_verify_arguments(parser)

    def handle(self, *args, bag: Path, **options):
        try:
            self.stdout.write(verifier.verify(bag, verifier.anchors_from(options)))
        except verifier.Failure as exc:
            raise CommandError(f"FAILED: {exc}") from None
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise CommandError(f"FAILED: the bag could not be read: {exc!r}") from None
