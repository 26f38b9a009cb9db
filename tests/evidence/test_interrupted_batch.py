"""A browser batch whose task stops on an error it could not foresee is marked
interrupted (its page must not wait for ever), and that is audited, in the same
transaction: the log says when and why a batch stopped, and who had started it."""

import io
import zipfile

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from django_tasks_db.models import DBTaskResult

from casefiles.audit import verify_log
from casefiles.models import AuditEntry
from evidence import tasks
from evidence.intake.staging import staging_dir
from evidence.models import IntakeBatch
from tests.evidence.images import jpeg_bytes

pytestmark = pytest.mark.django_db


def _zip(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return buffer.getvalue()


def test_a_batch_stopped_by_an_error_is_marked_interrupted_and_audited(
    client, cast, django_capture_on_commit_callbacks, monkeypatch
):
    client.force_login(cast.investigator)
    upload = SimpleUploadedFile("d.zip", _zip({"a.jpg": jpeg_bytes(30)}))
    with django_capture_on_commit_callbacks(execute=True):
        client.post(
            reverse("evidence:upload", args=[cast.case.reference]),
            {"files": [upload], "acquired_from": "S-0003"},
        )
    batch = IntakeBatch.objects.get()

    def broken(**kwargs):
        raise RuntimeError("the database went away")

    monkeypatch.setattr(tasks, "run_intake", broken)
    with pytest.raises(RuntimeError):
        tasks.ingest_staged_batch.call(*DBTaskResult.objects.get().args_kwargs["args"])
    batch.refresh_from_db()
    assert (batch.status, batch.claimed_by) == ("interrupted", "")
    assert batch.problems[-1]["reason"] == "the database went away"
    entry = AuditEntry.objects.get(action="evidence.batch_interrupted")
    assert (entry.actor, entry.case, entry.target_id) == (
        cast.investigator,
        cast.case,
        str(batch.pk),
    )
    assert entry.details["reason"] == "the database went away"
    assert (staging_dir(batch) / "names.json").is_file()  # a new task can resume it
    chain, bound = verify_log()
    assert chain.ok and bound.ok
