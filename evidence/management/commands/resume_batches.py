"""manage.py resume_batches: queue again browser uploads whose worker was lost."""

from django.core.management.base import BaseCommand

from evidence.tasks import resume_grouping, resume_staged_batches


class Command(BaseCommand):
    help = (
        "Queue again every browser upload batch left unfinished (its db_worker killed, the "
        "machine restarted), and the near-duplicate grouping of every case holding images "
        "not yet grouped. Safe to run at any time, e.g. before each db_worker starts."
    )

    def handle(self, *args, **options):
        resumed = resume_staged_batches()
        self.stdout.write(
            f"{len(resumed)} batch(es) queued again: {', '.join(map(str, resumed)) or '-'}"
        )
        if cases := resume_grouping():
            self.stdout.write(f"near-duplicate grouping queued for {len(cases)} case(s)")
