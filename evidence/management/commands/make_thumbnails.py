"""manage.py make_thumbnails [--case REF]: the thumbnails intake could not store."""

from django.core.management.base import BaseCommand, CommandError

from evidence.services import make_missing_thumbnails

from ._common import get_case


class Command(BaseCommand):
    help = (
        "Make the thumbnails that could not be stored at intake (items flagged "
        "derivative_failed), from their verified originals; exit 1 if any still cannot be."
    )

    def add_arguments(self, parser):
        parser.add_argument("--case", help="only this case's items")

    def handle(self, *args, case=None, **options):
        made, left = make_missing_thumbnails(case=get_case(case) if case else None)
        for item in left:
            self.stderr.write(f"NOT MADE  {item.case.reference} {item.reference}")
        line = f"{made} thumbnails made; {len(left)} items still without one"
        if left:
            raise CommandError(line, returncode=1)
        self.stdout.write(line)
