"""Checkpoints without anyone thinking of them (decision 0025): a schedule, one after
each reveal or package build, and verify_audit failing in production when the log has
gone unsigned past the window."""

import io
import re
from datetime import timedelta
from pathlib import Path
from unittest import mock

import pytest
from django.conf import settings as django_settings
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection, transaction
from django.tasks import TaskResultStatus
from django.utils import timezone
from django_tasks_db.models import DBTaskResult

from casefiles import audit, services, tasks
from casefiles.audit_actions import checkpoint_after, declared_actions
from casefiles.models import AuditCheckpoint, AuditEntry
from tests.db_guard import guard_lifted


@pytest.fixture
def signing(settings, tmp_path, key):
    settings.DATA_DIR = tmp_path  # checkpoints are published under it
    settings.ATHAR_TSA_URL = ""
    return tmp_path / "checkpoints"


@pytest.fixture
def log(db, signing):
    for n in range(5):
        audit.record(None, "test.event", n=n)


def _waiting(task_obj):
    return DBTaskResult.objects.filter(
        task_path=task_obj.module_path, status=TaskResultStatus.READY
    )


def _verify(*, later=timedelta(0)):
    """verify_audit as if run ``later`` from now: (error or "ok", stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    when = timezone.now() + later
    with mock.patch("casefiles.services.checkpoints.timezone.now", return_value=when):
        try:
            call_command("verify_audit", stdout=out, stderr=err)
        except CommandError as exc:
            return str(exc), out.getvalue(), err.getvalue()
    return "ok", out.getvalue(), err.getvalue()


def _delete_after(seq):
    """What a database superuser can do: cut the entries after ``seq``. The chain still
    verifies, as entries cut from its end leave no gap."""
    table = AuditEntry._meta.db_table
    with guard_lifted(table), connection.cursor() as cursor:
        cursor.execute(f'DELETE FROM "{table}" WHERE seq > %s', [seq])
    assert audit.verify_chain().ok


# verify_audit and the age of the newest checkpoint ---------------------------------------


def test_verify_audit_says_how_old_the_newest_checkpoint_is_and_what_came_after(log):
    services.publish_audit_checkpoint()
    audit.record(None, "test.later")
    audit.record(None, "test.later")
    result, out, err = _verify(later=timedelta(minutes=30))
    assert result == "ok"
    assert re.search(r"last checkpoint: size 5, signed 30 min ago; 2 entries newer than it", out)
    assert err == ""


def test_entries_cut_after_the_checkpoint_fail_verify_audit_in_production_past_the_window(
    log, settings
):
    """The attack: a reveal after the last checkpoint, then deleted. Within the window it
    cannot be seen (decision 0025 says so); once the window has passed without a newer
    checkpoint, a production installation's verify_audit fails."""
    settings.PRODUCTION = True
    settings.ATHAR_CHECKPOINT_MAX_AGE_MINUTES = 120
    _row, _ = services.publish_audit_checkpoint()
    last = AuditEntry.objects.order_by("-seq").first().seq  # the checkpoint's own entry
    audit.record(None, "people.reveal_identity", reason="the attacker's own reveal")
    _delete_after(last)

    assert _verify(later=timedelta(minutes=119))[0] == "ok"
    result, _, _ = _verify(later=timedelta(minutes=121))
    # The deleted reveal left no trace ("0 entries newer"): only the age tells.
    assert result.startswith(
        "checkpoint OVERDUE: last checkpoint: size 5, signed 2 h 1 min ago; 0 entries newer"
    )
    assert "ATHAR_CHECKPOINT_MAX_AGE_MINUTES (120)" in result


def test_outside_production_an_overdue_checkpoint_is_a_warning(log, settings):
    settings.PRODUCTION = False
    services.publish_audit_checkpoint()
    result, _, err = _verify(later=timedelta(hours=5))
    assert result == "ok"
    assert err.startswith("warning: last checkpoint: size 5, signed 5 h 0 min ago")


def test_no_checkpoint_at_all_fails_in_production_once_entries_are_older_than_the_window(
    log, settings
):
    settings.PRODUCTION = True
    assert _verify(later=timedelta(minutes=60))[0] == "ok"
    result, _, _ = _verify(later=timedelta(hours=3))
    assert result.startswith("checkpoint OVERDUE: no checkpoint yet: 5 entries unsigned")


# The schedule -------------------------------------------------------------------------------


def test_a_tick_queues_the_next_one_then_signs_and_publishes(log, signing, settings):
    settings.ATHAR_CHECKPOINT_EVERY_MINUTES = 60
    before = timezone.now()
    size = tasks.checkpoint_tick.call()

    (next_tick,) = _waiting(tasks.checkpoint_tick)
    assert timedelta(minutes=59) < next_tick.run_after - before < timedelta(minutes=61)
    assert AuditCheckpoint.objects.get().size == size == 5
    assert (signing / "latest" / "checkpoint.json").is_file()
    assert (signing / "latest").resolve().name == "checkpoint-5"


def test_a_quiet_hour_still_gets_its_checkpoint_and_the_schedule_stays_one(log, signing):
    tasks.checkpoint_tick.call()
    tasks.checkpoint_tick.call()  # nothing happened in between but the first's own entry
    assert list(AuditCheckpoint.objects.values_list("size", flat=True).order_by("size")) == [5, 6]
    assert _waiting(tasks.checkpoint_tick).count() == 1
    assert (signing / "latest").resolve().name == "checkpoint-6"


def test_a_failing_tick_leaves_the_next_one_queued(log):
    with mock.patch.object(services, "publish_audit_checkpoint", side_effect=OSError("disk full")):
        with pytest.raises(OSError):
            tasks.checkpoint_tick.call()
    assert _waiting(tasks.checkpoint_tick).count() == 1


def test_checkpoint_schedule_starts_one_schedule_however_often_it_runs(db, signing, settings):
    settings.ATHAR_CHECKPOINT_EVERY_MINUTES = 15
    out = []
    for _ in range(3):
        call_command("checkpoint_schedule", stdout=mock.Mock(write=out.append))
    assert _waiting(tasks.checkpoint_tick).count() == 1
    assert out[0].startswith("checkpoint schedule started: every 15 min")
    assert out[1] == out[2] == "checkpoint schedule already running: a tick is waiting\n"


def test_make_run_starts_the_schedule_before_the_worker():
    makefile = (Path(django_settings.BASE_DIR) / "Makefile").read_text()
    run = makefile.split("\nrun:", 1)[1].split("\n\n", 1)[0]
    assert "manage.py checkpoint_schedule" in run
    assert run.index("checkpoint_schedule") < run.index("db_worker")


# After a reveal or a package build -----------------------------------------------------------


def test_a_reveal_queues_a_checkpoint_when_it_commits_and_reveals_in_a_row_share_one(
    log, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        audit.record(None, "people.view")
    assert not _waiting(tasks.make_checkpoint).exists()

    with django_capture_on_commit_callbacks(execute=True):
        audit.record(None, "people.reveal_identity", reason="court order")
    with django_capture_on_commit_callbacks(execute=True):
        audit.record(None, "missing.profile_reveal")
    assert _waiting(tasks.make_checkpoint).count() == 1

    (queued,) = _waiting(tasks.make_checkpoint)
    entries = AuditEntry.objects.count()
    assert queued.task.call() == entries
    assert AuditCheckpoint.objects.exists()


def test_a_rolled_back_reveal_queues_nothing(log, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        try:
            with transaction.atomic():
                audit.record(None, "disclosure.build")
                raise RuntimeError("the build failed after its entry")
        except RuntimeError:
            pass
    assert not _waiting(tasks.make_checkpoint).exists()


def test_every_reveal_and_the_package_build_make_a_checkpoint():
    """A new reveal action is covered only when its app lists it in CHECKPOINT_AFTER."""
    reveals = {
        code
        for code in declared_actions()
        if re.search(r"reveal", code) and not re.search(r"failed|refused", code)
    }
    assert reveals
    assert reveals | {"disclosure.build"} <= checkpoint_after()
