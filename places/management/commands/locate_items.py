"""Place the photos of a case (or of every case) by their GPS positions: for items taken
in before intake did it, or while the geocoder's data was missing."""

from django.core.management.base import BaseCommand, CommandError

from casefiles.models import Case
from places.services.locations import locate_case


class Command(BaseCommand):
    help = __doc__

    def add_arguments(self, parser):
        parser.add_argument("--case", help="the case's reference (default: every case)")

    def handle(self, *args, case=None, **options):
        cases = Case.objects.order_by("reference")
        if case:
            cases = cases.filter(reference=case)
            if not cases.exists():
                raise CommandError(f"No case {case}.")
        for each in cases:
            written = locate_case(actor=None, case=each)
            self.stdout.write(f"{each.reference}: {written} photos placed")
