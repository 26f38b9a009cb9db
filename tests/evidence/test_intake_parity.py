"""The browser upload and `manage.py ingest` take the same inputs and give the same
results; a duplicate names the earlier item that holds the same bytes, where the reader
may see it."""

import io
import json
import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse
from django_tasks_db.models import DBTaskResult

from casefiles.access import Role
from evidence.intake import staging
from evidence.models import EvidenceItem, IntakeBatch
from evidence.tasks import ingest_staged_batch
from tests.evidence.conftest import sha256
from tests.evidence.helpers import item_flags, take_in
from tests.evidence.images import jpeg_bytes, write
from tests.evidence.test_names_and_uploads import _zip_without_utf8_flag
from tests.factories import MembershipFactory

pytestmark = pytest.mark.django_db

SOURCE = "W-0017"
MEDIUM = "USB stick, SanDisk, S/N 4471"
METHOD = "handed over in person"
# What an item's custody events say, compared field by field.
CUSTODY = (
    "action",
    "from_custodian",
    "to_custodian",
    "purpose",
    "sha256",
    "hash_result",
    "notes",
    "actor_id",
)
GARBAGE = b"\xff\xd8\xff\xe0" + b"\x13" * 5000

# A custodian's drive: photos, a 0-byte file, a corrupt one, a copy of a photo; the
# custodian's list gets one photo's hash wrong.
FILES = {
    "a.jpg": jpeg_bytes(60),
    "b.jpg": jpeg_bytes(61),
    "c.jpg": jpeg_bytes(62),
    "d-copy.jpg": jpeg_bytes(60),
    "empty.jpg": b"",
    "garbage.jpg": GARBAGE,
}


def _custodian_list() -> bytes:
    lines = [
        f"{'0' * 64 if name == 'b.jpg' else sha256(data)}  {name}" for name, data in FILES.items()
    ]
    return ("\n".join(lines) + "\n").encode()


@pytest.fixture
def drive(tmp_path):
    for name, data in FILES.items():
        write(tmp_path / "drive" / name, data)
    listing = tmp_path / "SHA256SUMS"
    listing.write_bytes(_custodian_list())
    return tmp_path / "drive", listing


def _ingest(case, user, path, *extra):
    """`manage.py ingest` as the investigator types it; returns its JSON summary."""
    out = io.StringIO()
    call_command(
        "ingest",
        str(path),
        "--case",
        case.reference,
        "--source",
        SOURCE,
        "--medium",
        MEDIUM,
        "--method",
        METHOD,
        "--as",
        user.username,
        "--jobs",
        "1",
        *extra,
        stdout=out,
    )
    return out.getvalue()


def _upload(client, case, files, *, capture, listing=None, **fields):
    """The upload page, as the investigator fills it in; any task it queues runs as
    `manage.py db_worker` would run it."""
    data = {
        "files": [SimpleUploadedFile(name, content) for name, content in files.items()],
        "acquired_from": SOURCE,
        "medium": MEDIUM,
        "method": METHOD,
        **fields,
    }
    if listing is not None:
        data["custodian_manifest"] = SimpleUploadedFile("SHA256SUMS", listing)
    with capture(execute=True):
        response = client.post(reverse("evidence:upload", args=[case.reference]), data)
    for queued in DBTaskResult.objects.filter(task_path=ingest_staged_batch.module_path):
        ingest_staged_batch.call(*queued.args_kwargs["args"])
    return response


def _outcome(batch: IntakeBatch) -> dict:
    """What a batch took in, item by item (by path), and its counts and lists."""
    batch.refresh_from_db()
    items = {}
    for item in batch.items.select_related("original", "provenance").order_by("pk"):
        p = item.provenance
        items[item.original_path] = {
            "sha256": item.original.sha256,
            "size": item.original.size,
            "media_type": item.original.media_type,
            "kind": item.kind,
            "duplicate": item.is_duplicate,
            "flags": item.flags,
            "flagged": item.is_flagged,
            "integrity": item.integrity,
            "provenance": (p.acquired_from, p.method, p.medium, p.acquired_by_id),
            "custody": list(item.custody_events.order_by("pk").values_list(*CUSTODY)),
        }
    counts = {
        name: getattr(batch, name)
        for name in ("status", "seen", "stored", "duplicate", "flagged", "failed", "skipped")
    }
    medium_events = [
        (e.action, e.from_custodian, e.to_custodian, e.purpose, e.hash_result, e.notes)
        for e in batch.custody_events.filter(item=None)
    ]
    listed = sorted(
        batch.manifest_entries.values_list("path", "algorithm", "expected", "actual", "result")
    )
    return {
        "items": items,
        "counts": counts,
        "medium": medium_events,
        "custodian_list": listed,
        "custodian_list_sha256": batch.custodian_manifest and batch.custodian_manifest.sha256,
        "intake_manifest_sha256": batch.manifest.sha256,
    }


@pytest.fixture
def two_cases(cast, other_case):
    """The investigator takes the drive into one case from the command line and into
    another in the browser: neither run sees the other's items as duplicates."""
    MembershipFactory(user=cast.investigator, case=other_case, role=Role.INVESTIGATOR)
    return cast.case, other_case


@pytest.mark.parametrize("where", ["request", "task"])
def test_the_upload_page_and_ingest_take_the_same_drive_in_alike(
    client, cast, two_cases, drive, where, monkeypatch, django_capture_on_commit_callbacks
):
    folder, listing = drive
    by_command, by_page = two_cases
    if where == "task":  # taken in by the task worker, as a large upload is
        monkeypatch.setattr(staging, "SMALL_BYTES", 0)
    _ingest(by_command, cast.investigator, folder, "--manifest", str(listing))
    client.force_login(cast.investigator)
    response = _upload(
        client,
        by_page,
        dict(sorted(FILES.items())),  # as a file chooser lists a folder's files
        capture=django_capture_on_commit_callbacks,
        listing=listing.read_bytes(),
    )
    assert response.status_code == 302, response.content.decode()
    command = _outcome(IntakeBatch.objects.get(case=by_command))
    page = _outcome(IntakeBatch.objects.get(case=by_page))
    assert set(page["items"]) == set(FILES)
    for path in FILES:
        assert page["items"][path] == command["items"][path], path
    assert page == command
    items, counts = page["items"], page["counts"]
    assert counts == {
        "status": "done",
        "seen": 6,
        "stored": 5,
        "duplicate": 1,
        "flagged": 3,  # the empty file, the corrupt one, the one the list gets wrong
        "failed": 0,
        "skipped": 0,
    }
    assert items["empty.jpg"]["size"] == 0 and items["empty.jpg"]["sha256"] == sha256(b"")
    assert [f["code"] for f in items["empty.jpg"]["flags"]] == ["empty"]
    assert "undecodable" in {f["code"] for f in items["garbage.jpg"]["flags"]}
    assert [f["code"] for f in items["b.jpg"]["flags"]] == ["manifest_mismatch"]
    assert items["d-copy.jpg"]["duplicate"] and not items["a.jpg"]["duplicate"]
    assert page["custodian_list_sha256"] == sha256(listing.read_bytes())
    mismatched = [row for row in page["custodian_list"] if row[-1] != "match"]
    assert mismatched == [("b.jpg", "sha256", "0" * 64, sha256(FILES["b.jpg"]), "mismatch")]
    # The upload's result page says what the command line's summary says of the list.
    shown = client.get(IntakeBatch.objects.get(case=by_page).get_absolute_url()).content.decode()
    assert "Against the custodian" in shown and "b.jpg" in shown


def test_a_single_zero_byte_file_is_taken_in_and_flagged_in_the_browser_as_on_the_command_line(
    client, cast, two_cases, tmp_path, django_capture_on_commit_callbacks
):
    by_command, by_page = two_cases
    write(tmp_path / "one" / "empty.jpg", b"")
    _ingest(by_command, cast.investigator, tmp_path / "one" / "empty.jpg")
    client.force_login(cast.investigator)
    response = _upload(
        client, by_page, {"empty.jpg": b""}, capture=django_capture_on_commit_callbacks
    )
    assert response.status_code == 302, response.content.decode()
    page = _outcome(IntakeBatch.objects.get(case=by_page))
    assert page == _outcome(IntakeBatch.objects.get(case=by_command))
    assert page["counts"]["stored"] == 1 and page["counts"]["flagged"] == 1
    assert item_flags(EvidenceItem.objects.get(case=by_page)) == {"empty": "zero-byte file"}


def test_a_custodians_list_that_is_not_one_is_refused_alike_before_anything_is_taken_in(
    client, cast, two_cases, drive, tmp_path, django_capture_on_commit_callbacks
):
    folder, _ = drive
    by_command, by_page = two_cases
    bad = tmp_path / "notes.txt"
    bad.write_bytes(b"the custodian's notes, not a list\n")
    with pytest.raises(CommandError, match="not a checksum line"):
        _ingest(by_command, cast.investigator, folder, "--manifest", str(bad))
    client.force_login(cast.investigator)
    response = _upload(
        client,
        by_page,
        {"a.jpg": FILES["a.jpg"]},
        capture=django_capture_on_commit_callbacks,
        listing=bad.read_bytes(),
    )
    assert response.status_code == 200
    html = response.content.decode()
    assert "not a checksum line" in html
    assert f'value="{SOURCE}"' in html and f'value="{MEDIUM}"' in html  # kept as typed
    assert not IntakeBatch.objects.exists()


def test_a_zip_uploaded_with_its_names_encoding_reads_them_as_ingest_does(
    client, cast, two_cases, tmp_path, django_capture_on_commit_callbacks
):
    by_command, by_page = two_cases
    # Written as Arabic Windows Explorer does: the name in cp720, no UTF-8 flag.
    archive = _zip_without_utf8_flag(
        tmp_path / "drive.zip", [("صورة.jpg".encode("cp720"), jpeg_bytes(63))]
    )
    _ingest(by_command, cast.investigator, archive, "--zip-encoding", "cp720")
    client.force_login(cast.investigator)
    response = _upload(
        client,
        by_page,
        {"drive.zip": archive.read_bytes()},
        capture=django_capture_on_commit_callbacks,
        zip_encoding="cp720",
    )
    assert response.status_code == 302, response.content.decode()
    by_cli = EvidenceItem.objects.get(case=by_command).original_path
    assert by_cli == "صورة.jpg"
    member = EvidenceItem.objects.filter(case=by_page, original_path__contains="/").get()
    assert member.original_path == f"drive.zip/{by_cli}"
    assert not member.flags
    assert IntakeBatch.objects.get(case=by_page).name_encoding == "cp720"


# --- a duplicate names the earlier item ----------------------------------------------------


def test_a_duplicate_links_the_earlier_item_on_its_page_the_upload_result_and_the_summary(
    client, cast, tmp_path, django_capture_on_commit_callbacks
):
    case = cast.case
    write(tmp_path / "m" / "a.jpg", FILES["a.jpg"])
    write(tmp_path / "m" / "z-copy.jpg", FILES["a.jpg"])
    summary = json.loads(_ingest(case, cast.investigator, tmp_path / "m", "--json"))
    first = EvidenceItem.objects.get(original_path="a.jpg")
    copy = EvidenceItem.objects.get(original_path="z-copy.jpg")
    assert summary["duplicates"] == [
        {
            "item": copy.reference,
            "path": "z-copy.jpg",
            "same_as": first.reference,
            "same_as_path": "a.jpg",
        }
    ]
    text = _ingest(case, cast.investigator, tmp_path / "m", "--new-batch")
    again = EvidenceItem.objects.filter(original_path="z-copy.jpg").latest("pk")
    assert (
        f"duplicate: z-copy.jpg ({again.reference}): the same bytes as {first.reference} "
        "(a.jpg), taken in before" in text
    )

    client.force_login(cast.lawyer)  # a reader of the case, not the one who took it in
    page = client.get(copy.get_absolute_url()).content.decode()
    assert f'<a href="{first.get_absolute_url()}">{first.reference}</a>' in page
    assert "The same bytes were taken in before in this case" in page

    # In the browser, later: the upload's result names the item it repeats.
    client.force_login(cast.investigator)
    response = _upload(
        client,
        case,
        {"again.jpg": FILES["a.jpg"]},
        capture=django_capture_on_commit_callbacks,
    )
    batch = IntakeBatch.objects.latest("pk")
    result = client.get(response["Location"]).content.decode()
    upload = batch.items.get()
    assert upload.is_duplicate
    assert f'<a href="{upload.get_absolute_url()}">{upload.reference}</a>' in result
    assert f'<a href="{first.get_absolute_url()}">{first.reference}</a>' in result


def test_a_duplicate_never_names_an_item_of_a_case_the_reader_cannot_see(
    client, cast, other_case, tmp_path, django_capture_on_commit_callbacks
):
    # The same bytes were taken in first in a case the investigator is no member of.
    outsider = cast.outsider
    MembershipFactory(user=outsider, case=other_case, role=Role.INVESTIGATOR)
    elsewhere = take_in(other_case, outsider, {"a.jpg": FILES["a.jpg"]}, tmp_path / "o")
    theirs = elsewhere.items.get()
    client.force_login(cast.investigator)
    capture = django_capture_on_commit_callbacks
    _upload(client, cast.case, {"a.jpg": FILES["a.jpg"]}, capture=capture)
    ours = IntakeBatch.objects.filter(case=cast.case).get().items.get()
    assert not ours.is_duplicate  # a case never learns another holds the bytes
    for url in (ours.get_absolute_url(), ours.batch.get_absolute_url()):
        html = client.get(url).content.decode()
        assert theirs.get_absolute_url() not in html and other_case.reference not in html
        assert "same bytes" not in html.lower()
    # Taken in again in this case: the copy names this case's item, never the other's.
    _upload(client, cast.case, {"b.jpg": FILES["a.jpg"]}, capture=capture)
    copy = EvidenceItem.objects.get(case=cast.case, original_path="b.jpg")
    assert copy.is_duplicate
    for url in (copy.get_absolute_url(), copy.batch.get_absolute_url()):
        html = client.get(url).content.decode()
        assert f'<a href="{ours.get_absolute_url()}">{ours.reference}</a>' in html
        assert theirs.get_absolute_url() not in html and other_case.reference not in html
    hrefs = re.findall(r'href="([^"]*)"', client.get(copy.get_absolute_url()).content.decode())
    assert not [h for h in hrefs if other_case.reference in h]
