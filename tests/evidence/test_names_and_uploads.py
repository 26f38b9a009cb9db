"""File names that are not plain UTF-8, and browser uploads of awkward ZIPs."""

import io
import json
import os
import zipfile
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from django_tasks_db.models import DBTaskResult

from casefiles.models import AuditEntry
from evidence.models import EvidenceItem, IntakeBatch
from evidence.storage import evidence_storage
from evidence.tasks import ingest_staged_batch
from tests.evidence.conftest import sha256
from tests.evidence.helpers import item_flags, stored_bytes
from tests.evidence.images import jpeg_bytes, write

pytestmark = pytest.mark.django_db

PHOTO = "صورة.jpg"  # "photo.jpg" in Arabic


def _raw_bytes_in(reason: str) -> bytes:
    return bytes.fromhex(reason.rpartition("raw bytes (hex): ")[2].split()[0])


# --- names on disk that are not UTF-8 ---------------------------------------------------


def test_a_file_named_in_an_old_windows_code_page_is_stored_flagged_and_rerun_safely(
    tmp_path, ingest
):
    medium = tmp_path / "usb"
    raw = PHOTO.encode("cp1256")  # as an Arabic Windows PC of 2010 wrote it to a FAT stick
    data, twin = jpeg_bytes(1), jpeg_bytes(2)
    medium.mkdir()
    Path(os.fsdecode(os.fsencode(medium) + b"/" + raw)).write_bytes(data)
    # A name that really is spelt with the backslash escapes the first one is shown as.
    shown = raw.decode("utf-8", "backslashreplace")
    write(medium / shown, twin)
    write(medium / PHOTO, jpeg_bytes(3))  # the same name in UTF-8: nothing to flag

    code, out, err = ingest(medium, "--json")
    assert code == 0, err
    assert (json.loads(out)["stored"], json.loads(out)["failed"]) == (3, 0)
    items = EvidenceItem.objects.filter(original_path=shown).order_by("reference")
    assert [stored_bytes(i) for i in items] == [twin, data]  # sorted as shown, then by name
    flagged = items[1]
    assert flagged.original_filename == r"\xd5\xe6\xd1\xc9.jpg"
    reason = item_flags(flagged)["filename_not_utf8"]
    assert _raw_bytes_in(reason) == raw  # the name on the medium, recoverable exactly
    assert item_flags(items[0]) == {}
    assert item_flags(EvidenceItem.objects.get(original_path=PHOTO)) == {}

    code, out, err = ingest(medium, "--json")  # a re-run resumes the batch: nothing new
    assert code == 0, err
    summary = json.loads(out)
    assert (summary["new_items"], summary["already_done"]) == (0, 3)
    assert EvidenceItem.objects.count() == 3 and IntakeBatch.objects.count() == 1


def test_a_name_that_is_not_utf8_is_matched_against_the_custodians_list_by_its_bytes(
    tmp_path, ingest
):
    medium = tmp_path / "usb"
    raw = PHOTO.encode("cp1256")
    data = jpeg_bytes(7)
    medium.mkdir()
    Path(os.fsdecode(os.fsencode(medium) + b"/" + raw)).write_bytes(data)
    listing = tmp_path / "SHA256SUMS"  # sha256sum run on the same Windows PC: the same bytes
    listing.write_bytes(sha256(data).encode() + b"  " + raw + b"\n")

    code, out, err = ingest(medium, "--manifest", str(listing), "--json")
    assert code == 0, err
    shown = raw.decode("utf-8", "backslashreplace")
    entries = IntakeBatch.objects.get().manifest_entries.values_list("path", "result")
    assert list(entries) == [(shown, "match")]
    checked = json.loads(out)["custodian_manifest"]
    assert [e["path"] for e in checked["match"]] == [shown]
    assert checked["missing"] == checked["unlisted"] == []
    # the custodian's list is kept as it came, byte for byte
    stored = IntakeBatch.objects.get().custodian_manifest
    assert stored.sha256 == sha256(listing.read_bytes())


def test_a_zip_member_named_in_an_unknown_code_page_matches_the_list_by_its_bytes(tmp_path, ingest):
    raw, data = PHOTO.encode("cp720"), jpeg_bytes(8)
    archive = _zip_without_utf8_flag(tmp_path / "drive.zip", [(raw, data)])
    listing = tmp_path / "SHA256SUMS"  # made on the PC that wrote the ZIP: the same bytes
    listing.write_bytes(sha256(data).encode() + b"  " + raw + b"\n")
    code, _, err = ingest(archive, "--manifest", str(listing))
    assert code == 0, err
    item = EvidenceItem.objects.get()
    assert "filename_encoding_unknown" in item_flags(item)  # no encoding given: shown as cp437
    entries = IntakeBatch.objects.get().manifest_entries.values_list("path", "result", "item")
    assert list(entries) == [(item.original_path, "match", item.pk)]


def test_a_folder_named_in_a_code_page_flags_the_files_in_it(tmp_path, ingest):
    medium = tmp_path / "usb"
    folder = Path(os.fsdecode(os.fsencode(medium) + b"/" + "حلب".encode("cp1256")))
    folder.mkdir(parents=True)
    (folder / "1.jpg").write_bytes(jpeg_bytes(4))
    code, _, err = ingest(medium)
    assert code == 0, err
    item = EvidenceItem.objects.get()
    assert item.original_path == r"\xcd\xe1\xc8/1.jpg" and item.original_filename == "1.jpg"
    assert (
        _raw_bytes_in(item_flags(item)["filename_not_utf8"]) == "حلب".encode("cp1256") + b"/1.jpg"
    )


# --- ZIP names without the UTF-8 flag ---------------------------------------------------


def _zip_without_utf8_flag(path: Path, members: list[tuple[bytes, bytes]]) -> Path:
    """A ZIP as Windows Explorer or an old 7-Zip writes it: names as raw bytes, no flag.

    zipfile sets the UTF-8 flag for any non-ASCII name, so the ZIP is written with ASCII
    stand-ins of the same length, which are then replaced by the raw names (in the local
    header and the central directory alike)."""
    stand_ins = [f"~{n}~".ljust(len(raw), "~").encode() for n, (raw, _) in enumerate(members)]
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        for stand_in, (_, data) in zip(stand_ins, members, strict=True):
            zf.writestr(stand_in.decode(), data)
    blob = buffer.getvalue()
    for stand_in, (raw, _) in zip(stand_ins, members, strict=True):
        assert blob.count(stand_in) == 2
        blob = blob.replace(stand_in, raw)
    path.write_bytes(blob)
    with zipfile.ZipFile(path) as zf:
        assert not any(i.flag_bits & 0x800 for i in zf.infolist())
    return path


def test_zip_names_in_utf8_without_the_flag_are_read_as_utf8_and_match_the_list(tmp_path, ingest):
    photo, note = jpeg_bytes(5), "شهادة\n".encode()
    archive = _zip_without_utf8_flag(
        tmp_path / "drive.zip",
        [(f"حلب/{PHOTO}".encode(), photo), (b"readme.txt", note)],
    )
    listing = tmp_path / "SHA256SUMS"  # the custodian's list, names in UTF-8
    listing.write_text(f"{sha256(photo)}  حلب/{PHOTO}\n{sha256(note)}  readme.txt\n")
    code, _, err = ingest(archive, "--manifest", str(listing))
    assert code == 0, err
    item = EvidenceItem.objects.get(original_path=f"حلب/{PHOTO}")
    assert stored_bytes(item) == photo and item_flags(item) == {}
    results = dict(IntakeBatch.objects.get().manifest_entries.values_list("path", "result"))
    assert results == {f"حلب/{PHOTO}": "match", "readme.txt": "match"}


def test_zip_names_in_an_unknown_code_page_are_flagged_with_their_bytes(tmp_path, ingest):
    raw = PHOTO.encode("cp720")  # Windows Explorer on an Arabic PC
    archive = _zip_without_utf8_flag(tmp_path / "drive.zip", [(raw, jpeg_bytes(6))])
    code, _, err = ingest(archive)
    assert code == 0, err
    item = EvidenceItem.objects.get()
    assert item.original_path == raw.decode("cp437")
    assert stored_bytes(item) == jpeg_bytes(6)
    reason = item_flags(item)["filename_encoding_unknown"]
    assert _raw_bytes_in(reason) == raw and "--zip-encoding" in reason


def test_the_investigator_can_name_the_zip_encoding(tmp_path, ingest):
    raw = PHOTO.encode("cp720")
    archive = _zip_without_utf8_flag(
        tmp_path / "drive.zip",
        [(raw, jpeg_bytes(7)), ("ملف.txt".encode(), b"utf-8 named")],
    )
    code, _, err = ingest(archive, "--zip-encoding", "cp720")
    assert code == 0, err
    items = {i.original_path: i for i in EvidenceItem.objects.all()}
    assert set(items) == {PHOTO, "ملف.txt"}  # UTF-8 names are still read as UTF-8
    assert stored_bytes(items[PHOTO]) == jpeg_bytes(7) and item_flags(items[PHOTO]) == {}


def test_a_resumed_zip_keeps_the_name_encoding_its_batch_first_read_it_with(
    tmp_path, ingest, client, cast
):
    raw = PHOTO.encode("cp720")
    archive = _zip_without_utf8_flag(
        tmp_path / "drive.zip", [(raw, jpeg_bytes(9)), (b"b.jpg", jpeg_bytes(10))]
    )
    code, _, err = ingest(archive, "--zip-encoding", "cp720", "--json")
    assert code == 0, err
    batch = IntakeBatch.objects.get()
    assert batch.name_encoding == "cp720"
    # The same command again, without naming the encoding: the batch's own is used, so
    # the Arabic name is the same file, already done, not a new item beside it.
    code, out, err = ingest(archive, "--json")
    assert code == 0, err
    assert (json.loads(out)["batch"], json.loads(out)["new_items"]) == (batch.pk, 0)
    assert sorted(EvidenceItem.objects.values_list("original_path", flat=True)) == [
        "b.jpg",
        PHOTO,
    ]
    client.force_login(cast.lead)
    page = client.get(batch.get_absolute_url()).content.decode()
    assert "<code>cp720</code>" in page


def test_another_zip_encoding_for_a_batch_is_refused_unless_a_new_batch_is_asked_for(
    tmp_path, ingest
):
    raw = PHOTO.encode("cp720")
    archive = _zip_without_utf8_flag(tmp_path / "drive.zip", [(raw, jpeg_bytes(11))])
    code, _, err = ingest(archive)  # names flagged: the encoding was not known
    assert code == 0, err
    first = IntakeBatch.objects.get()
    assert first.name_encoding == ""

    code, _, err = ingest(archive, "--zip-encoding", "cp720")
    assert code == 1
    assert "--new-batch" in err and "UTF-8 alone" in err
    assert EvidenceItem.objects.count() == 1  # nothing taken in twice under a new name

    code, _, err = ingest(archive, "--zip-encoding", "cp720", "--new-batch")
    assert code == 0, err
    second = IntakeBatch.objects.exclude(pk=first.pk).get()
    item = second.items.get()
    assert (second.name_encoding, item.original_path, item_flags(item)) == ("cp720", PHOTO, {})
    assert item.original_id == first.items.get().original_id  # the same stored bytes


def test_an_encoding_that_changes_no_name_resumes_the_batch(tmp_path, ingest):
    archive = _zip_without_utf8_flag(tmp_path / "drive.zip", [(b"a.jpg", jpeg_bytes(12))])
    assert ingest(archive)[0] == 0
    code, out, err = ingest(archive, "--zip-encoding", "CP1256", "--json")
    assert code == 0, err
    assert json.loads(out)["new_items"] == 0 and IntakeBatch.objects.count() == 1
    assert IntakeBatch.objects.get().name_encoding == "cp1256"  # as named from now on


def test_a_batch_that_did_not_record_its_encoding_is_judged_by_the_names_it_took_in(
    tmp_path, ingest
):
    """A batch from before batches recorded their encoding: the names it took in tell
    which reading goes on with it."""
    raw = PHOTO.encode("cp720")
    archive = _zip_without_utf8_flag(
        tmp_path / "drive.zip", [(raw, jpeg_bytes(14)), (b"b.jpg", jpeg_bytes(15))]
    )
    assert ingest(archive, "--zip-encoding", "cp720")[0] == 0
    batch = IntakeBatch.objects.get()
    IntakeBatch.objects.update(name_encoding="")  # as such a batch is after migrating

    code, _, err = ingest(archive)  # names read as UTF-8 alone: the Arabic one would change
    assert code == 1 and "--new-batch" in err
    assert EvidenceItem.objects.count() == 2

    code, out, err = ingest(archive, "--zip-encoding", "cp720", "--json")
    assert code == 0, err
    assert (json.loads(out)["batch"], json.loads(out)["new_items"]) == (batch.pk, 0)
    batch.refresh_from_db()
    assert batch.name_encoding == "cp720"
    entry = AuditEntry.objects.get(action="evidence.batch_name_encoding")
    assert (entry.details["encoding"], entry.details["was"]) == ("cp720", "")


def test_a_folder_records_no_zip_name_encoding(tmp_path, ingest):
    write(tmp_path / "usb" / "a.jpg", jpeg_bytes(13))
    assert ingest(tmp_path / "usb", "--zip-encoding", "cp720")[0] == 0
    assert IntakeBatch.objects.get().name_encoding == ""  # no ZIP: no name was read so


def test_an_unknown_zip_encoding_is_refused_before_anything_is_taken_in(tmp_path, ingest):
    archive = _zip_without_utf8_flag(tmp_path / "drive.zip", [(b"a.jpg", jpeg_bytes(8))])
    for name in ("cp9999", "rot13", "utf-16"):
        code, _, err = ingest(archive, "--zip-encoding", name)
        assert code == 1 and "unknown encoding" in err
    assert not IntakeBatch.objects.exists()


# --- browser uploads of ZIPs -------------------------------------------------------------


def _zip_bytes(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return buffer.getvalue()


def _queue_upload(client, cast, capture, files: list[tuple[str, bytes]]) -> IntakeBatch:
    """Upload in the browser; a ZIP, or many files, are queued for a background task."""
    client.force_login(cast.investigator)
    with capture(execute=True):
        client.post(
            reverse("evidence:upload", args=[cast.case.reference]),
            {
                "files": [SimpleUploadedFile(name, data) for name, data in files],
                "acquired_from": "S-0003",
            },
        )
    return IntakeBatch.objects.get()


def _upload(client, cast, capture, files: list[tuple[str, bytes]]) -> IntakeBatch:
    """Upload, then run the queued task as `manage.py db_worker` would."""
    batch = _queue_upload(client, cast, capture, files)
    ingest_staged_batch.call(*DBTaskResult.objects.get().args_kwargs["args"])
    batch.refresh_from_db()
    return batch


def test_two_uploaded_zips_with_the_same_name_are_both_taken_in(
    client, cast, django_capture_on_commit_callbacks
):
    first = _zip_bytes({"a.jpg": jpeg_bytes(10), "b.jpg": jpeg_bytes(11)})
    second = _zip_bytes({"a.jpg": jpeg_bytes(12)})
    batch = _upload(
        client,
        cast,
        django_capture_on_commit_callbacks,
        [("Archive.zip", first), ("Archive.zip", second)],
    )
    assert (batch.status, batch.stored, batch.failed) == ("done", 5, 0)
    got = sorted(batch.items.values_list("original_path", "original__sha256"))
    assert got == sorted(
        [
            ("Archive.zip", sha256(first)),
            ("Archive.zip", sha256(second)),
            ("Archive.zip/a.jpg", sha256(jpeg_bytes(10))),
            ("Archive.zip/b.jpg", sha256(jpeg_bytes(11))),
            ("Archive.zip#2/a.jpg", sha256(jpeg_bytes(12))),
        ]
    )


def test_an_uploaded_zip_bomb_or_broken_zip_is_kept_whole_and_the_rest_goes_on(
    client, cast, django_capture_on_commit_callbacks, monkeypatch
):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for n in range(300):  # each member small; together they expand over 200:1
            zf.writestr(f"z{n}.bin", b"\x00" * (64 << 10))
    bomb = buffer.getvalue()
    good = _zip_bytes({"a.jpg": jpeg_bytes(13)})
    broken = good.replace(b"PK\x01\x02", b"PK\x01\x09")  # central directory unreadable
    assert zipfile.is_zipfile(io.BytesIO(broken))  # still looks like a ZIP from its end
    batch = _upload(
        client,
        cast,
        django_capture_on_commit_callbacks,
        [("bomb.zip", bomb), ("broken.zip", broken), ("photo.jpg", jpeg_bytes(14))],
    )
    got = dict(batch.items.values_list("original_path", "original__sha256"))
    assert got == {
        "bomb.zip": sha256(bomb),
        "broken.zip": sha256(broken),
        "photo.jpg": sha256(jpeg_bytes(14)),
    }
    assert (batch.status, batch.stored, batch.failed) == ("incomplete", 3, 2)
    problems = {p["path"]: p for p in batch.problems}
    assert set(problems) == {"bomb.zip/", "broken.zip/"}
    assert problems["bomb.zip/"]["kind"] == "failed"
    assert "as a whole" in problems["bomb.zip/"]["reason"]
    assert "BadZipFile" in problems["broken.zip/"]["reason"]
    page = client.get(batch.get_absolute_url()).content.decode()
    assert "as a whole" in page


def test_an_uploaded_zip_of_many_small_members_is_kept_whole_and_its_staged_copy_cleared(
    client, cast, django_capture_on_commit_callbacks
):
    from evidence.intake.staging import staging_dir

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for n in range(300):  # 300 distinct members of 1 MiB: a ZIP of some 300 KB
            zf.writestr(f"{n:03d}.bin", n.to_bytes(2) * (1 << 19))
    bomb = buffer.getvalue()
    assert len(bomb) < 400_000
    batch = _upload(
        client,
        cast,
        django_capture_on_commit_callbacks,
        [("many.zip", bomb), ("photo.jpg", jpeg_bytes(15))],
    )
    got = dict(batch.items.values_list("original_path", "original__sha256"))
    assert got == {"many.zip": sha256(bomb), "photo.jpg": sha256(jpeg_bytes(15))}
    assert (batch.status, batch.failed) == ("incomplete", 1)
    assert "as a whole" in batch.problems[0]["reason"]
    store = evidence_storage().root
    written = sum(f.stat().st_size for f in store.rglob("*") if f.is_file())
    assert written < 2 * len(bomb)  # the archive itself, a photo and its thumbnail
    assert not staging_dir(batch).exists()  # nothing left that a resume could take in


def test_an_upload_that_could_not_be_stored_keeps_its_staged_copies(
    client, cast, django_capture_on_commit_callbacks, monkeypatch
):
    from evidence.intake import steps
    from evidence.intake.staging import staging_dir

    def full_disk(*args, **kwargs):
        raise OSError(28, "No space left on device")

    archive = _zip_bytes({"a.jpg": jpeg_bytes(16)})
    monkeypatch.setattr(steps, "_read_and_store", full_disk)
    batch = _queue_upload(client, cast, django_capture_on_commit_callbacks, [("d.zip", archive)])
    ingest_staged_batch.call(batch.pk, cast.investigator.pk)
    batch.refresh_from_db()
    assert batch.failed and (staging_dir(batch) / "names.json").is_file()


# --- a worker killed mid-batch -------------------------------------------------------


def _killed_mid_way(batch: IntakeBatch, owner_pid: int) -> None:
    """What a SIGKILLed db_worker leaves: the batch claimed by it, its task "running"."""
    import socket
    from datetime import timedelta

    from django.utils import timezone

    IntakeBatch.objects.filter(pk=batch.pk).update(
        status="running",
        claimed_by=f"{socket.gethostname()}:{owner_pid}",
        heartbeat_at=timezone.now() - timedelta(hours=1),
    )
    DBTaskResult.objects.update(status="RUNNING")


def test_a_batch_whose_worker_was_killed_is_queued_again_and_completes(
    client, cast, django_capture_on_commit_callbacks, capsys
):
    from django.core.management import call_command

    archive = _zip_bytes({"a.jpg": jpeg_bytes(20), "b.jpg": jpeg_bytes(21)})
    batch = _queue_upload(client, cast, django_capture_on_commit_callbacks, [("d.zip", archive)])
    _killed_mid_way(batch, owner_pid=999_999_999)  # no such process: its worker is gone

    call_command("resume_batches")
    assert f"1 batch(es) queued again: {batch.pk}" in capsys.readouterr().out
    call_command("resume_batches")  # already waiting in the queue: not queued twice
    assert "0 batch(es)" in capsys.readouterr().out
    queued = DBTaskResult.objects.get(status="READY")
    assert queued.args_kwargs["args"] == [batch.pk, cast.investigator.pk]
    ingest_staged_batch.call(*queued.args_kwargs["args"])
    batch.refresh_from_db()
    assert (batch.status, batch.stored, batch.claimed_by) == ("done", 3, "")
    DBTaskResult.objects.update(status="SUCCESSFUL")
    call_command("resume_batches")  # done: nothing to resume
    assert "0 batch(es)" in capsys.readouterr().out


def test_a_task_queued_twice_leaves_a_batch_a_live_worker_holds_alone(
    client, cast, django_capture_on_commit_callbacks
):
    archive = _zip_bytes({"a.jpg": jpeg_bytes(22)})
    batch = _queue_upload(client, cast, django_capture_on_commit_callbacks, [("d.zip", archive)])
    _killed_mid_way(batch, owner_pid=1)  # pid 1 lives: a worker still hashing a long video
    held = IntakeBatch.objects.values("status", "claimed_by").get(pk=batch.pk)

    assert ingest_staged_batch.call(batch.pk, cast.investigator.pk) == 0
    assert IntakeBatch.objects.values("status", "claimed_by").get(pk=batch.pk) == held
    assert not batch.items.exists()


def _claimed_just_now(batch: IntakeBatch, owner: str) -> None:
    """What a worker killed a second ago leaves: its batch claimed, its heartbeat fresh."""
    from django.utils import timezone

    IntakeBatch.objects.filter(pk=batch.pk).update(
        status="running", claimed_by=owner, heartbeat_at=timezone.now()
    )
    DBTaskResult.objects.update(status="RUNNING")


def test_a_quick_restart_queues_again_at_once_a_batch_whose_worker_here_is_dead(
    client, cast, django_capture_on_commit_callbacks, capsys
):
    import signal
    import socket
    import subprocess

    from django.core.management import call_command

    from evidence.services import leases

    archive = _zip_bytes({"a.jpg": jpeg_bytes(23)})
    batch = _queue_upload(client, cast, django_capture_on_commit_callbacks, [("d.zip", archive)])
    worker = subprocess.Popen(["sleep", "60"])  # a db_worker of this host...
    owner = f"{socket.gethostname()}:{worker.pid}@{leases._start_time(worker.pid)}"
    _claimed_just_now(batch, owner)
    call_command("resume_batches")  # ...alive, within its lease: left to it
    assert "0 batch(es)" in capsys.readouterr().out
    worker.send_signal(signal.SIGKILL)  # ...killed, the machine restarted a moment later
    worker.wait()

    call_command("resume_batches")
    assert f"1 batch(es) queued again: {batch.pk}" in capsys.readouterr().out
    ingest_staged_batch.call(batch.pk, cast.investigator.pk)
    batch.refresh_from_db()
    assert (batch.status, batch.stored, batch.claimed_by) == ("done", 2, "")


def test_a_worker_pid_now_used_by_another_process_counts_as_dead(
    client, cast, django_capture_on_commit_callbacks, capsys
):
    import socket

    from django.core.management import call_command

    from evidence import services
    from evidence.services import leases

    archive = _zip_bytes({"a.jpg": jpeg_bytes(24)})
    batch = _queue_upload(client, cast, django_capture_on_commit_callbacks, [("d.zip", archive)])
    started = int(leases._start_time(1))
    # The process of pid 1, claiming the batch a moment ago: left to it.
    _claimed_just_now(batch, f"{socket.gethostname()}:1@{started}")
    call_command("resume_batches")
    assert "0 batch(es)" in capsys.readouterr().out
    assert not services.claim_batch(batch)

    # pid 1 lives, but it is not the process that claimed the batch: that one started later
    _claimed_just_now(batch, f"{socket.gethostname()}:1@{started + 1}")
    call_command("resume_batches")
    assert f"1 batch(es) queued again: {batch.pk}" in capsys.readouterr().out
    assert ingest_staged_batch.call(batch.pk, cast.investigator.pk) == 2  # the ZIP, its photo


def test_a_run_that_finds_its_batch_done_under_other_names_once_claimed_gives_it_back(
    tmp_path, ingest, taker
):
    """Another run may finish the batch between this run's look and its claim: checked
    again once claimed, and the batch handed back as it was."""
    from evidence.intake.pipeline import run_intake
    from evidence.intake.sources import list_zip

    raw = PHOTO.encode("cp720")
    archive = _zip_without_utf8_flag(tmp_path / "drive.zip", [(raw, jpeg_bytes(16))])
    assert ingest(archive, "--zip-encoding", "cp720")[0] == 0  # done, under the Arabic name
    batch = IntakeBatch.objects.get()
    before = (batch.status, batch.claimed_by, batch.heartbeat_at)
    as_utf8 = list_zip(archive)  # the name read without the encoding: another file
    with pytest.raises(ValueError, match="--new-batch"):
        run_intake(actor=taker, batch=batch, listing=as_utf8, jobs=1, name_encoding="")
    batch.refresh_from_db()
    assert (batch.status, batch.claimed_by, batch.heartbeat_at) == before
    assert batch.name_encoding == "cp720" and EvidenceItem.objects.count() == 1


# --- bidirectional controls in names ----------------------------------------------------

SPOOF = "IMG\u202egpj.exe"  # shows as "IMGexe.jpg": an executable posing as a photo


def test_a_name_with_bidi_controls_is_kept_flagged_shown_escaped_and_never_downloaded_as_is(
    client, cast, django_capture_on_commit_callbacks
):
    import re

    from evidence.names import BIDI_CONTROLS

    photo = "DCIM/\u2067\u0635\u0648\u0631\u0629\u2069.jpg"
    archive = _zip_bytes({SPOOF: b"MZ\x90\x00 not a photo", photo: jpeg_bytes(31)})
    # (the browser's own name of an upload loses such characters on its way in: Django
    # keeps printable ones only; the members of a ZIP keep theirs)
    batch = _upload(client, cast, django_capture_on_commit_callbacks, [("drive.zip", archive)])
    items = {i.original_path: i for i in batch.items.all()}
    spoof = items[f"drive.zip/{SPOOF}"]  # kept in the record exactly as it was
    assert spoof.original_filename == SPOOF and spoof.is_flagged
    assert "IMG<U+202E>gpj.exe" in item_flags(spoof)["filename_bidi_control"]
    member = items[f"drive.zip/{photo}"]
    assert "filename_bidi_control" in item_flags(member)
    assert item_flags(items["drive.zip"]) == {}

    client.force_login(cast.lawyer)
    pages = [
        client.get(spoof.get_absolute_url()),
        client.get(member.get_absolute_url()),
        client.get(reverse("evidence:gallery", args=[cast.case.reference])),
    ]
    client.force_login(cast.investigator)
    pages.append(client.get(batch.get_absolute_url()))
    for response in pages:
        html = response.content.decode()
        assert response.status_code == 200
        assert not BIDI_CONTROLS & set(html), response.request["PATH_INFO"]
    assert "IMG&lt;U+202E&gt;gpj.exe" in pages[0].content.decode()
    assert "&lt;U+2067&gt;صورة&lt;U+2069&gt;.jpg" in pages[1].content.decode()

    client.force_login(cast.lawyer)
    response = client.get(reverse("evidence:download", args=[cast.case.reference, spoof.reference]))
    assert response.status_code == 200
    disposition = response["Content-Disposition"]
    assert 'filename="IMGgpj.exe"' in disposition  # it reads as what it is
    assert not re.search("%E2%80%AE|\u202e", disposition)
    assert b"".join(response.streaming_content) == b"MZ\x90\x00 not a photo"


def test_a_folder_file_named_with_a_bidi_override_is_flagged_too(tmp_path, ingest):
    write(tmp_path / "usb" / SPOOF, b"MZ")
    write(tmp_path / "usb" / "plain.jpg", jpeg_bytes(32))
    assert ingest(tmp_path / "usb")[0] == 0
    assert "filename_bidi_control" in item_flags(EvidenceItem.objects.get(original_path=SPOOF))
    assert item_flags(EvidenceItem.objects.get(original_path="plain.jpg")) == {}
