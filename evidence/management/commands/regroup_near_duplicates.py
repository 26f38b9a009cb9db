"""manage.py regroup_near_duplicates [--case REF]: rebuild near-duplicate groups."""

from django.core.management.base import BaseCommand

from casefiles.models import Case
from evidence.near_duplicates import regroup_near_duplicates

from ._common import get_case


class Command(BaseCommand):
    help = (
        "Rebuild near-duplicate groups from scratch, from every image's perceptual hash "
        "(each intake groups its new images by itself; this is for a case whose grouping "
        "is in doubt). Waits for an intake into the case that is in progress."
    )

    def add_arguments(self, parser):
        parser.add_argument("--case", help="only this case (default: every case)")

    def handle(self, *args, case=None, **options):
        cases = [get_case(case)] if case else Case.objects.order_by("reference")
        for c in cases:
            self.stdout.write(f"{c.reference}: {regroup_near_duplicates(c)} near-duplicate groups")
