from datetime import timedelta

from django.conf import settings
from django.core.management.base import BaseCommand
from django.utils import timezone

from casefiles.tasks import queue_next_tick


class Command(BaseCommand):
    help = (
        "Start the checkpoint schedule: queue a tick for the task worker (db_worker), which "
        "signs and publishes a checkpoint every ATHAR_CHECKPOINT_EVERY_MINUTES and queues "
        "the next. Safe to run at every start: a tick already waiting is left alone."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--now", action="store_true", help="the first tick at once, not one period from now"
        )

    def handle(self, *args, **options):
        every = settings.ATHAR_CHECKPOINT_EVERY_MINUTES
        at = timezone.now() if options["now"] else timezone.now() + timedelta(minutes=every)
        if queue_next_tick(at=at):
            self.stdout.write(
                f"checkpoint schedule started: every {every} min, first at {at:%H:%M} UTC"
            )
        else:
            self.stdout.write("checkpoint schedule already running: a tick is waiting")
