"""manage.py fixity [--case REF]: re-hash every stored original and record the result."""

from django.core.management.base import BaseCommand, CommandError

from evidence.services import run_fixity

from ._common import get_case


class Command(BaseCommand):
    help = "Re-hash stored originals; exit 1 if any changed or went missing."

    def add_arguments(self, parser):
        parser.add_argument("--case", help="only this case's items")

    def handle(self, *args, case=None, **options):
        case_obj = get_case(case) if case else None
        check = run_fixity(case=case_obj)
        for sha in check.changed:
            self.stderr.write(f"CHANGED  sha256:{sha}")
        for sha in check.missing:
            self.stderr.write(f"MISSING  sha256:{sha}")
        line = (
            f"fixity #{check.pk}: {check.files_checked} files ({check.items_checked} items), "
            f"{check.ok} ok, {len(check.changed)} changed, {len(check.missing)} missing"
        )
        if check.changed or check.missing:
            raise CommandError(line, returncode=1)
        self.stdout.write(line)
