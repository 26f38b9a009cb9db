"""manage.py verify_package DIR: check a disclosure package offline (reads nothing from the
database): the bag, the signature, the custody chains and the audit proofs."""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from disclosure.verifier import Failure, verify


class Command(BaseCommand):
    help = "Check a disclosure package's bag, signature, custody chains and audit proofs."
    requires_system_checks: list[str] = []
    requires_migrations_checks = False

    def add_arguments(self, parser):
        parser.add_argument("bag", type=Path, help="the package's folder (holding bagit.txt)")

    def handle(self, *args, bag: Path, **options):
        try:
            self.stdout.write(verify(bag))
        except Failure as exc:
            raise CommandError(f"FAILED: {exc}") from None
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise CommandError(f"FAILED: the bag could not be read: {exc!r}") from None
