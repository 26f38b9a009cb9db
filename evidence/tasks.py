"""Background intake of browser uploads (``django_tasks_db``; ``manage.py db_worker``)."""

from django.contrib.auth import get_user_model
from django.tasks import task
from django.utils import timezone
from django_tasks_db.models import DBTaskResult

from . import near_duplicates, services
from .intake.pipeline import run_intake
from .intake.staging import PREFIX, clear_staging, custodian_list_for, listing_for, staging_dir
from .models import IntakeBatch


@task()
def ingest_staged_batch(batch_id: int, actor_id: int) -> int:
    """Take in what a browser upload staged for this batch; resumable like any intake.

    Queued again for a batch that is done, or that a live worker is taking in, it
    leaves the batch alone: so a batch can be re-queued whenever in doubt."""
    batch = IntakeBatch.objects.select_related("case").get(pk=batch_id)
    if batch.status == IntakeBatch.Status.DONE or not services.claim_batch(batch):
        return 0
    actor = get_user_model().objects.get(pk=actor_id)
    try:
        report = run_intake(
            actor=actor,
            batch=batch,
            listing=listing_for(batch),
            custodian_manifest=custodian_list_for(batch),
        )
    except Exception as exc:
        # The batch page must not wait for ever: say what stopped it; the staged copies
        # stay, so a new task can resume it. Audited.
        services.interrupt_batch(actor=actor, batch=batch, reason=str(exc))
        raise
    clear_staging(batch)
    return report.new_items


@task()
def group_near_duplicates(case_id: int) -> int:
    """Place a case's new images into near-duplicate groups (queued by a web upload, so
    the request does not wait for it). Returns the images placed."""
    from casefiles.models import Case

    return near_duplicates.group_near_duplicates(Case.objects.get(pk=case_id)).items


def resume_staged_batches() -> list[int]:
    """Queue again every browser batch left unfinished (its worker killed, the machine
    restarted): those still staged and not already waiting in the queue. ``db_worker``
    never restarts a task it lost, so without this such a batch stays "running"."""
    queued = {
        result.args_kwargs["args"][0]
        for result in DBTaskResult.objects.ready().filter(task_path=ingest_staged_batch.module_path)
    }
    unfinished: list[IntakeBatch] = list(
        IntakeBatch.objects.filter(
            source_root__startswith=PREFIX,
            status__in=[
                IntakeBatch.Status.PENDING,
                IntakeBatch.Status.RUNNING,
                IntakeBatch.Status.INTERRUPTED,
            ],
        )
        .exclude(pk__in=queued)
        .order_by("pk")
    )
    # A fresh heartbeat: its worker is alive (an old one may be too; the task checks),
    # unless that worker ran on this host and is known dead (a quick restart).
    alive_since = timezone.now() - services.LEASE
    unfinished = [
        batch
        for batch in unfinished
        if not (
            batch.status == IntakeBatch.Status.RUNNING
            and batch.heartbeat_at is not None
            and batch.heartbeat_at > alive_since
            and not services.owner_known_dead(batch.claimed_by)
        )
    ]
    resumed = []
    for batch in unfinished:
        if (staging_dir(batch) / "names.json").is_file():
            ingest_staged_batch.enqueue(batch.pk, batch.created_by_id)
            resumed.append(batch.pk)
    return resumed


def resume_grouping() -> list[int]:
    """Queue the grouping of every case holding images not yet grouped, unless already
    queued. Returns those cases."""
    queued = {
        result.args_kwargs["args"][0]
        for result in DBTaskResult.objects.ready().filter(
            task_path=group_near_duplicates.module_path
        )
    }
    behind = [case for case in near_duplicates.cases_not_fully_grouped() if case not in queued]
    for case in behind:
        group_near_duplicates.enqueue(case)
    return behind
