"""Checkpoints made without anyone thinking of them (``django_tasks_db``; ``db_worker``).

Two ways in, one task: the schedule (``checkpoint_tick``, every
``ATHAR_CHECKPOINT_EVERY_MINUTES``, started by ``manage.py checkpoint_schedule``) and the
entries after which a checkpoint is due at once (each app's ``CHECKPOINT_AFTER``:
reveals, package builds), which queue ``make_checkpoint`` when their transaction commits.
django-tasks has no periodic tasks: a tick queues the next one before it signs, so a
tick that fails or a worker that dies leaves the schedule running. Decision 0025.
"""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.tasks import TaskResultStatus, task
from django.utils import timezone
from django_tasks_db.models import DBTaskResult

from . import services
from .audit_actions import checkpoint_after
from .models import AuditEntry


@task()
def make_checkpoint() -> int:
    """Sign and publish a checkpoint of the log as it is now; returns its size."""
    row, _where = services.publish_audit_checkpoint()
    return row.size


@task()
def checkpoint_tick() -> int:
    """The schedule: queue the next tick, then sign and publish. Returns the size."""
    queue_next_tick()
    return make_checkpoint.call()


def _waiting(task_obj):
    """The queued runs of a task that no worker has started yet (due or not)."""
    return DBTaskResult.objects.filter(
        task_path=task_obj.module_path, status=TaskResultStatus.READY
    )


def queue_next_tick(*, at=None) -> bool:
    """Queue a tick ``ATHAR_CHECKPOINT_EVERY_MINUTES`` from now (or at ``at``) unless one
    is already waiting. Returns whether one was queued."""
    if _waiting(checkpoint_tick).exists():
        return False
    when = at or timezone.now() + timedelta(minutes=settings.ATHAR_CHECKPOINT_EVERY_MINUTES)
    checkpoint_tick.using(run_after=when).enqueue()
    return True


def checkpoint_soon() -> bool:
    """Queue a checkpoint now unless one is already waiting (many reveals in a row make
    one checkpoint, after the last of them). Returns whether one was queued."""
    if _waiting(make_checkpoint).exists():
        return False
    make_checkpoint.enqueue()
    return True


def after_entry(entry: AuditEntry) -> None:
    """The audit follower: an entry after which a checkpoint is due queues one when its
    transaction commits (never for a rolled-back reveal)."""
    if entry.action in checkpoint_after():
        transaction.on_commit(checkpoint_soon, robust=True)
