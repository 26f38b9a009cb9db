"""``manage.py seed_demo``: the fictional demo (accounts, cases, photographs, people,
testimony, consent, an identification, a checkpoint). Idempotent; never in production."""

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from demo.seed import Seeder


class Command(BaseCommand):
    help = (
        "Load the fictional demo: accounts, cases and the story of one case (never in production)."
    )

    def handle(self, *args, **options):
        if getattr(settings, "PRODUCTION", False):
            raise CommandError(
                "Demo data is never loaded in production (ATHAR_ENV=production): "
                "its accounts have known passwords."
            )
        seeder = Seeder(
            say=lambda what: self.stdout.write(f"  {what}") if options["verbosity"] > 1 else None
        )
        created = seeder.run()
        if created:
            self.stdout.write(f"demo data: {created} objects created")
        else:
            self.stdout.write("demo data present: nothing to do")
