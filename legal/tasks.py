"""Bulk actions of more than a few hundred items, run by the task worker
(``django_tasks_db``; ``manage.py db_worker``) while the job's page shows progress."""

from django.tasks import task

from .models import BulkJob
from .services import bulk


@task()
def run_bulk_job(job_id: int) -> int:
    """Carry out a confirmed bulk job from where it stands (queued again, it resumes
    after its last committed chunk; done, it does nothing). Returns the items changed."""
    job = BulkJob.objects.select_related("actor", "case").get(pk=job_id)
    try:
        job = bulk.run_bulk(job)
    except Exception as exc:
        # The progress page must not wait for ever: it says what stopped the job; what
        # was committed stands, audited, and a new task resumes after it.
        bulk.fail_bulk(job, str(exc))
        raise
    return job.changed
