import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import DatabaseError, connection, transaction

from evidence.models import CustodyEvent, EvidenceItem, FixityCheck, IntakeBatch
from evidence.storage import evidence_storage
from tests.evidence.images import jpeg_bytes, write
from tests.scratch_db import ROOT, count_rows, run_manage, scratch_database

pytestmark = pytest.mark.django_db
TABLE = CustodyEvent._meta.db_table


@pytest.fixture
def three_items(tmp_path, ingest):
    for n in range(3):
        write(tmp_path / "m" / f"{n}.jpg", jpeg_bytes(40 + n))
    assert ingest(tmp_path / "m")[0] == 0
    return list(EvidenceItem.objects.select_related("original").order_by("reference"))


@pytest.mark.parametrize(
    "sql",
    [f'UPDATE "{TABLE}" SET purpose = %s', f'DELETE FROM "{TABLE}"'],
    ids=["update", "delete"],
)
def test_custody_events_cannot_be_changed_or_removed_at_the_database(three_items, sql):
    count = CustodyEvent.objects.count()
    with pytest.raises(DatabaseError, match="append-only"), transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute(sql, ["forged"] if "UPDATE" in sql else [])
    assert CustodyEvent.objects.count() == count
    assert not CustodyEvent.objects.filter(purpose="forged").exists()


def test_custody_events_cannot_be_truncated_on_postgresql(three_items):
    if connection.vendor != "postgresql":
        pytest.skip("SQLite has no TRUNCATE")
    with pytest.raises(DatabaseError, match="append-only"), transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
            cursor.execute(f'TRUNCATE "{TABLE}" CASCADE')


def test_the_model_refuses_to_change_custody_events(three_items):
    event = CustodyEvent.objects.first()
    event.purpose = "forged"
    with pytest.raises(TypeError):
        event.save()
    with pytest.raises(TypeError):
        event.delete()
    with pytest.raises(TypeError):
        CustodyEvent.objects.update(purpose="forged")


def _fixity(*args):
    try:
        call_command("fixity", *args)
    except CommandError as exc:
        return exc.returncode, str(exc)
    return 0, ""


def test_fixity_passes_on_untouched_originals(three_items, case):
    code, _ = _fixity("--case", case.reference)
    assert code == 0
    check = FixityCheck.objects.get()
    # three originals and the batch's intake manifest
    assert (check.files_checked, check.ok, check.changed, check.missing) == (4, 4, [], [])
    assert check.items_checked == 3
    assert set(EvidenceItem.objects.values_list("integrity", flat=True)) == {"verified"}


def test_fixity_finds_a_flipped_byte_and_a_deleted_original(three_items, case):
    flipped, deleted, intact = three_items
    path = Path(evidence_storage().path(flipped.original.storage_key))
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x01
    path.chmod(0o644)
    path.write_bytes(bytes(data))
    Path(evidence_storage().path(deleted.original.storage_key)).unlink()

    code, message = _fixity("--case", case.reference)
    assert code == 1
    assert "1 changed, 1 missing" in message
    check = FixityCheck.objects.get()
    assert check.changed == [flipped.original.sha256]
    assert check.missing == [deleted.original.sha256]
    status = dict(EvidenceItem.objects.values_list("reference", "integrity"))
    assert status == {
        flipped.reference: "changed",
        deleted.reference: "missing",
        intact.reference: "verified",
    }
    results = dict(
        CustodyEvent.objects.filter(purpose__startswith="fixity", item__isnull=False).values_list(
            "item__reference", "hash_result"
        )
    )
    assert results == {
        flipped.reference: "mismatch",
        deleted.reference: "missing",
        intact.reference: "match",
    }


def test_fixity_checks_the_intake_manifest_and_the_custodians_list_too(tmp_path, ingest, case):
    write(tmp_path / "m" / "a.jpg", jpeg_bytes(50))
    (tmp_path / "SHA256SUMS").write_text(f"{'0' * 64}  a.jpg\n")
    assert ingest(tmp_path / "m", "--manifest", str(tmp_path / "SHA256SUMS"))[0] == 0
    batch = IntakeBatch.objects.get()
    manifest = Path(evidence_storage().path(batch.manifest.storage_key))
    manifest.chmod(0o644)
    manifest.write_bytes(manifest.read_bytes().replace(b"a.jpg", b"b.jpg"))

    code, message = _fixity("--case", case.reference)
    assert code == 1
    assert "3 files (1 items), 2 ok, 1 changed, 0 missing" in message
    assert FixityCheck.objects.get().changed == [batch.manifest.sha256]
    results = dict(
        batch.custody_events.filter(item=None, purpose__startswith="fixity").values_list(
            "notes", "hash_result"
        )
    )
    assert results.pop("custodian's checksum list") == "match"
    ((notes, result),) = results.items()
    assert result == "mismatch" and notes.startswith("intake manifest; found sha256 ")


def test_fixity_records_an_unreadable_original_and_checks_the_rest(three_items, case):
    unreadable, *others = three_items
    path = Path(evidence_storage().path(unreadable.original.storage_key))
    path.chmod(0o644)
    path.unlink()
    path.mkdir()  # reading it fails, as a failing disk would (root reads any mode)

    code, message = _fixity("--case", case.reference)
    assert code == 1
    assert "3 ok, 0 changed, 1 missing" in message  # two originals and the manifest
    check = FixityCheck.objects.get()
    assert (check.files_checked, check.missing) == (4, [unreadable.original.sha256])
    event = CustodyEvent.objects.get(item=unreadable, purpose__startswith="fixity")
    assert event.hash_result == "missing"
    assert event.notes.startswith("unreadable: ")
    assert {i.reference: i.integrity for i in EvidenceItem.objects.all()} == {
        unreadable.reference: "missing",
        **{i.reference: "verified" for i in others},
    }


def test_an_ingest_killed_midway_resumes_to_each_file_stored_once(tmp_path):
    medium = tmp_path / "drive"
    count = 120
    for n in range(count):
        write(medium / f"{n // 50:02d}" / f"IMG_{n:04d}.jpg", jpeg_bytes(n, size=(640, 480)))
    with scratch_database(tmp_path) as env:
        # Small transactions, so that the kill lands between two of them.
        env = {**env, "ATHAR_STORAGE_ROOT": str(tmp_path / "store"), "ATHAR_INTAKE_CHUNK": "10"}
        run_manage(
            env,
            "shell",
            "--no-imports",
            "-c",
            (
                "from django.contrib.auth.models import Group, User\n"
                "from casefiles.models import Case, Membership\n"
                "u = User.objects.create_user('taker')\n"
                "u.groups.add(Group.objects.get(name='Investigator'))\n"
                "c = Case.objects.create(reference='KILL-001', title='Killed ingest')\n"
                "Membership.objects.create(user=u, case=c, role='investigator')\n"
            ),
        )
        cmd = [
            sys.executable,
            str(ROOT / "manage.py"),
            "ingest",
            str(medium),
            "--case",
            "KILL-001",
            "--source",
            "custodian",
            "--as",
            "taker",
            "--jobs",
            "2",
            "--json",
        ]
        proc = subprocess.Popen(
            cmd,
            env=env,
            cwd=ROOT,
            start_new_session=True,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            n = count_rows(env, "evidence_evidenceitem")
            if n >= 30 or proc.poll() is not None:
                break
            time.sleep(0.01)
        os.killpg(proc.pid, signal.SIGKILL)  # the command and its workers, mid-way
        proc.wait()
        assert 0 < n < count, f"kill landed at {n} of {count}: not mid-way"

        rerun = subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True)
        assert rerun.returncode == 0, rerun.stderr
        check = (
            run_manage(
                env,
                "shell",
                "--no-imports",
                "-c",
                (
                    "import json\n"
                    "from evidence.models import EvidenceItem, IntakeBatch, StoredFile\n"
                    "from evidence.services import verify_custody\n"
                    "from casefiles.models import Case\n"
                    "b = IntakeBatch.objects.get()\n"
                    "print(json.dumps({'items': EvidenceItem.objects.count(),\n"
                    "  'paths': EvidenceItem.objects.values('original_path').distinct().count(),\n"
                    "  'files': StoredFile.objects.filter(media_type='image/jpeg').count(),\n"
                    "  'counts': [b.seen, b.stored, b.duplicate, b.failed, b.status],\n"
                    "  'custody': verify_custody(Case.objects.get())}))\n"
                ),
            )
            .stdout.strip()
            .splitlines()[-1]
        )
        import json

        result = json.loads(check)
        assert result["items"] == result["paths"] == result["files"] == count
        assert result["counts"] == [count, count, 0, 0, "done"]
        assert result["custody"] == []
        audit = run_manage(env, "verify_audit", check=False)
        assert audit.returncode == 0, audit.stderr
        stored = list((tmp_path / "store" / "sha256").rglob("*"))
        assert len([p for p in stored if p.is_file()]) >= count


@pytest.mark.parametrize(
    ("sql", "refused"),
    [
        ('UPDATE "evidence_storedfile" SET sha256 = %s', True),
        ('UPDATE "evidence_storedfile" SET storage_key = %s', True),
        ('UPDATE "evidence_storedfile" SET md5 = %s', False),  # extra digests may be filled
        ('DELETE FROM "evidence_storedfile"', True),
        ('UPDATE "evidence_provenance" SET camera_model = %s', True),
        ('UPDATE "evidence_evidenceitem" SET reference = %s', True),
        ('UPDATE "evidence_evidenceitem" SET original_filename = %s', True),
        ('UPDATE "evidence_evidenceitem" SET original_path = %s', True),
        ('UPDATE "evidence_evidenceitem" SET title = %s', False),
        ('DELETE FROM "evidence_evidenceitem"', True),
    ],
)
def test_what_identifies_an_original_cannot_be_rewritten_at_the_database(three_items, sql, refused):
    params = ["EV-FORGED"] if "%s" in sql else []
    with connection.cursor() as cursor:
        cursor.execute(
            "SET CONSTRAINTS ALL IMMEDIATE" if connection.vendor == "postgresql" else "SELECT 1"
        )
    if refused:
        with pytest.raises(DatabaseError, match=r"never change|append-only"), transaction.atomic():
            with connection.cursor() as cursor:
                cursor.execute(sql, params)
    else:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(sql, params)
    assert EvidenceItem.objects.count() == 3
    assert run_fixity_ok()


def run_fixity_ok():
    from evidence.services import run_fixity

    check = run_fixity()
    return not check.changed and not check.missing
