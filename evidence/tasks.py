"""Background intake of browser uploads (``django_tasks_db``; ``manage.py db_worker``)."""

from django.contrib.auth import get_user_model
from django.tasks import task

from .intake.pipeline import run_intake
from .intake.staging import clear_staging, listing_for
from .models import IntakeBatch


@task()
def ingest_staged_batch(batch_id: int, actor_id: int) -> int:
    """Take in what a browser upload staged for this batch; resumable like any intake."""
    batch = IntakeBatch.objects.select_related("case").get(pk=batch_id)
    actor = get_user_model().objects.get(pk=actor_id)
    report = run_intake(actor=actor, batch=batch, listing=listing_for(batch))
    clear_staging(batch)
    return report.new_items
