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
    try:
        report = run_intake(actor=actor, batch=batch, listing=listing_for(batch))
    except Exception as exc:
        # The batch page must not wait for ever: say what stopped it; the staged copies
        # stay, so a new task can resume it.
        IntakeBatch.objects.filter(pk=batch.pk).update(
            status=IntakeBatch.Status.INTERRUPTED,
            claimed_by="",
            problems=[*batch.problems, {"path": "", "kind": "failed", "reason": str(exc)}],
        )
        raise
    clear_staging(batch)
    return report.new_items
