from django.core.management.base import BaseCommand, CommandError

from casefiles.audit import verify_chain


class Command(BaseCommand):
    help = "Walk the audit chain; exit 0 when whole, 1 naming the first broken seq."

    def handle(self, *args, **options):
        report = verify_chain()
        if not report.ok:
            raise CommandError(report.summary(), returncode=1)
        self.stdout.write(report.summary())
