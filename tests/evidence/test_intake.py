import io
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from PIL import Image, ImageOps

from casefiles.audit import verify_chain
from casefiles.models import AuditEntry
from evidence.models import CustodyEvent, Derivative, EvidenceItem, IntakeBatch, StoredFile
from evidence.services import verify_custody
from evidence.storage import evidence_storage
from tests.evidence.conftest import sha256
from tests.evidence.factories import IntakeBatchFactory
from tests.evidence.helpers import item_flags, stored_bytes
from tests.evidence.images import jpeg_bytes, png_bomb, write

pytestmark = pytest.mark.django_db


def test_a_folder_is_taken_in_byte_for_byte_with_metadata_and_custody(tmp_path, ingest, case):
    medium = tmp_path / "usb"
    files = {
        "2013/08/a.jpg": jpeg_bytes(1, orientation=6),
        "2013/08/b.jpg": jpeg_bytes(2, make="NIKON", model="D70", gps=None),
        "notes.txt": "ملاحظات المصوّر\n".encode(),
    }
    for rel, data in files.items():
        write(medium / rel, data)
    code, out, err = ingest(medium, "--json")
    assert code == 0, err
    summary = json.loads(out)
    assert (summary["seen"], summary["stored"], summary["failed"]) == (3, 3, 0)

    items = {i.original_path: i for i in EvidenceItem.objects.select_related("original")}
    assert set(items) == set(files)
    for rel, data in files.items():
        item = items[rel]
        assert item.original.sha256 == sha256(data) and item.original.size == len(data)
        assert stored_bytes(item) == data
        assert item.original.storage_key == (
            f"sha256/{sha256(data)[:2]}/{sha256(data)[2:4]}/{sha256(data)}"
        )
    a = items["2013/08/a.jpg"].provenance
    assert (a.camera_make, a.camera_model, a.taken_at) == (
        "Canon",
        "EOS 40D",
        "2013:08:21 10:15:00",
    )
    assert float(a.gps_latitude) == pytest.approx(33.51, abs=1e-6)
    assert float(a.gps_longitude) == pytest.approx(36.29, abs=1e-6)
    assert a.orientation == 6
    assert a.metadata["GPSLatitudeRef"] == "N"
    assert items["2013/08/b.jpg"].provenance.gps_latitude is None
    assert items["notes.txt"].kind == "document" and items["notes.txt"].original.media_type == (
        "text/plain"
    )
    thumb = Derivative.objects.get(original=items["2013/08/a.jpg"].original, kind="thumbnail")
    # Orientation 6 (rotated 90°) is applied: the 320x240 photo becomes portrait.
    assert (thumb.width, thumb.height) == (192, 256)
    assert {i.reference for i in items.values()} == {"EV-000001", "EV-000002", "EV-000003"}

    assert CustodyEvent.objects.filter(item__isnull=False, action="acquired").count() == 3
    assert verify_custody(case) == []
    traced = [
        ref
        for e in AuditEntry.objects.filter(action="evidence.intake")
        for ref, *_ in e.details["items"]
    ]
    assert sorted(traced) == ["EV-000001", "EV-000002", "EV-000003"]
    assert verify_chain().ok

    batch = IntakeBatch.objects.get()
    manifest = Path(evidence_storage().path(batch.manifest.storage_key)).read_text()
    assert sha256(manifest.encode()) == batch.manifest.sha256
    for rel, data in files.items():
        assert f"{sha256(data)}\t{len(data)}\t{rel}" in manifest


def _quadrants(orientation: int) -> bytes:
    """A photo with four coloured quarters, tagged with an EXIF orientation."""
    img = Image.new("RGB", (640, 480), (255, 255, 255))
    img.paste((220, 30, 30), (0, 0, 320, 240))
    img.paste((30, 200, 30), (320, 0, 640, 240))
    img.paste((30, 30, 220), (0, 240, 320, 480))
    exif = Image.Exif()
    exif[274] = orientation
    out = io.BytesIO()
    img.save(out, "JPEG", quality=95, exif=exif)
    return out.getvalue()


def test_every_exif_orientation_gives_an_upright_thumbnail(tmp_path, ingest):
    photos = {o: _quadrants(o) for o in range(1, 9)}
    for o, data in photos.items():
        write(tmp_path / "m" / f"o{o}.jpg", data)
    code, _, err = ingest(tmp_path / "m")
    assert code == 0, err
    for item in EvidenceItem.objects.select_related("original"):
        o = int(item.original_filename[1])
        thumb = Derivative.objects.get(original=item.original, kind="thumbnail")
        got = Image.open(evidence_storage().path(thumb.storage_key)).convert("RGB")
        # The reference: Pillow's own upright turn of the full picture, then shrunk.
        want = ImageOps.exif_transpose(Image.open(io.BytesIO(photos[o]))).resize(got.size)
        assert got.size == ((192, 256) if o >= 5 else (256, 192))
        for x, y in ((0.25, 0.25), (0.75, 0.25), (0.25, 0.75), (0.75, 0.75)):
            at = (int(got.width * x), int(got.height * y))
            pairs = zip(got.getpixel(at), want.getpixel(at), strict=True)
            assert all(abs(a - b) < 40 for a, b in pairs), (o, at)


def test_the_same_bytes_twice_are_stored_once_and_counted_as_a_duplicate(tmp_path, ingest):
    data = jpeg_bytes(3)
    write(tmp_path / "m" / "one.jpg", data)
    write(tmp_path / "m" / "copy of one.jpg", data)
    code, out, _ = ingest(tmp_path / "m", "--json")
    assert code == 0
    assert json.loads(out)["duplicate"] == 1 and json.loads(out)["stored"] == 1
    assert StoredFile.objects.filter(sha256=sha256(data)).count() == 1
    assert EvidenceItem.objects.count() == 2


def test_running_the_same_ingest_again_changes_nothing(tmp_path, ingest):
    for n in range(3):
        write(tmp_path / "m" / f"{n}.jpg", jpeg_bytes(n))
    assert ingest(tmp_path / "m")[0] == 0
    audit_count = AuditEntry.objects.filter(action="evidence.intake").count()
    code, out, _ = ingest(tmp_path / "m", "--json")
    assert code == 0
    summary = json.loads(out)
    assert (summary["new_items"], summary["already_done"], summary["seen"]) == (0, 3, 3)
    assert EvidenceItem.objects.count() == 3 and IntakeBatch.objects.count() == 1
    assert AuditEntry.objects.filter(action="evidence.intake").count() == audit_count


def test_parallel_workers_give_the_same_result(tmp_path, ingest):
    data = {f"{n}.jpg": jpeg_bytes(n) for n in range(6)}
    for name, blob in data.items():
        write(tmp_path / "m" / name, blob)
    code, _out, err = ingest(tmp_path / "m", "--json", jobs=2)
    assert code == 0, err
    got = dict(EvidenceItem.objects.values_list("original_path", "original__sha256"))
    assert got == {name: sha256(blob) for name, blob in data.items()}


# --- bad input ---------------------------------------------------------------------------


def test_a_corrupt_or_truncated_jpeg_is_stored_hashed_and_flagged(tmp_path, ingest):
    good = jpeg_bytes(7)
    write(tmp_path / "m" / "truncated.jpg", good[: len(good) // 2])
    write(tmp_path / "m" / "garbage.jpg", b"\xff\xd8\xff\xe0" + b"\x13" * 5000)
    code, out, _ = ingest(tmp_path / "m", "--json")
    assert code == 0  # stored, so not a failure
    assert json.loads(out)["flagged"] == 2
    for item in EvidenceItem.objects.select_related("original"):
        assert "undecodable" in item_flags(item)
        data = (tmp_path / "m" / item.original_path).read_bytes()
        assert stored_bytes(item) == data and item.original.sha256 == sha256(data)
        assert not Derivative.objects.filter(original=item.original).exists()


def test_a_file_whose_extension_lies_is_typed_by_its_content_and_flagged(tmp_path, ingest):
    write(tmp_path / "m" / "holiday.pdf", jpeg_bytes(8))
    write(tmp_path / "m" / "report.jpg", b"%PDF-1.7\n" + b"x" * 100)
    assert ingest(tmp_path / "m")[0] == 0
    photo = EvidenceItem.objects.get(original_path="holiday.pdf")
    assert photo.original.media_type == "image/jpeg" and photo.kind == "photo"
    assert "application/pdf" in item_flags(photo)["extension_mismatch"]
    doc = EvidenceItem.objects.get(original_path="report.jpg")
    assert doc.original.media_type == "application/pdf" and "extension_mismatch" in item_flags(doc)


def test_a_zero_byte_file_is_stored_and_flagged(tmp_path, ingest):
    write(tmp_path / "m" / "empty.jpg", b"")
    assert ingest(tmp_path / "m")[0] == 0
    item = EvidenceItem.objects.get()
    assert item.original.size == 0 and item.original.sha256 == sha256(b"")
    assert "empty" in item_flags(item)


def test_a_decompression_bomb_is_flagged_without_being_decoded(tmp_path, ingest):
    bomb = png_bomb(20000, 20000)  # 400 megapixels claimed in a few dozen bytes
    assert len(bomb) < 200
    write(tmp_path / "m" / "bomb.png", bomb)
    assert ingest(tmp_path / "m")[0] == 0
    item = EvidenceItem.objects.get()
    assert "400000000 pixels" in item_flags(item)["decompression_bomb"]
    assert stored_bytes(item) == bomb
    assert not Derivative.objects.exists()


def _zip(path: Path, members: list[tuple[str, bytes]], symlinks=()):
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in members:
            zf.writestr(zipfile.ZipInfo(name), data)
        for name, target in symlinks:
            info = zipfile.ZipInfo(name)
            info.external_attr = 0o120777 << 16
            zf.writestr(info, target)
    return path


@pytest.mark.filterwarnings("ignore:Duplicate name")
def test_zip_entries_with_unsafe_names_are_stored_as_metadata_never_as_paths(tmp_path, ingest):
    before = sorted(p for p in tmp_path.rglob("*"))
    archive = _zip(
        tmp_path / "drive.zip",
        [
            ("../../escape.jpg", jpeg_bytes(10)),
            ("/etc/absolute.jpg", jpeg_bytes(11)),
            ("photos/same.jpg", jpeg_bytes(12)),
            ("photos/same.jpg", jpeg_bytes(13)),
        ],
        symlinks=[("photos/link.jpg", "/etc/passwd")],
    )
    code, out, err = ingest(archive, "--json")
    assert code == 0, err
    summary = json.loads(out)
    assert (summary["stored"], summary["skipped"], summary["failed"]) == (4, 1, 0)
    escape = EvidenceItem.objects.get(original_path="../../escape.jpg")
    assert "unsafe_path" in item_flags(escape)
    assert "unsafe_path" in item_flags(EvidenceItem.objects.get(original_path="/etc/absolute.jpg"))
    same = EvidenceItem.objects.filter(original_path="photos/same.jpg").order_by("reference")
    assert [("duplicate_name" in item_flags(i)) for i in same] == [False, True]
    assert {stored_bytes(i) for i in same} == {jpeg_bytes(12), jpeg_bytes(13)}
    batch = IntakeBatch.objects.get()
    # The archive itself, as handed over, is hashed too.
    assert batch.source_sha256 == sha256(archive.read_bytes())
    assert batch.custody_events.get(item=None).sha256 == batch.source_sha256
    problems = batch.problems
    assert problems == [
        {"path": "photos/link.jpg", "kind": "skipped", "reason": problems[0]["reason"]}
    ]
    # Nothing was written outside the store: only the store and the archive are new.
    after = sorted(p for p in tmp_path.rglob("*") if "store" not in p.parts)
    assert after == sorted([*before, archive])
    assert not (tmp_path.parent / "escape.jpg").exists()


def test_a_zip_bomb_member_is_refused_and_the_run_says_so(tmp_path, ingest):
    archive = tmp_path / "bomb.zip"
    with zipfile.ZipFile(archive, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("ok.jpg", jpeg_bytes(14))
        zf.writestr("noise.bin", os.urandom(256 << 10))  # the archive as a whole: under 100:1
        zf.writestr("zeros.bin", b"\x00" * (12 << 20))  # 12 MiB of zeros, some 12 KB compressed
    code, _out, err = ingest(archive, "--json")
    assert code == 2  # a file could not be stored
    assert "compression ratio" in err
    assert set(EvidenceItem.objects.values_list("original_path", flat=True)) == {
        "ok.jpg",
        "noise.bin",
    }
    batch = IntakeBatch.objects.get()
    assert (batch.failed, batch.stored, batch.status) == (1, 2, "incomplete")


def test_a_custodians_checksum_list_is_checked_line_by_line(tmp_path, ingest):
    a, b, c = jpeg_bytes(20), jpeg_bytes(21), jpeg_bytes(22)
    write(tmp_path / "m" / "a.jpg", a)
    write(tmp_path / "m" / "b.jpg", b)
    write(tmp_path / "m" / "c.jpg", c)
    listing = tmp_path / "SHA256SUMS"
    listing.write_text(f"{sha256(a)}  a.jpg\n{'0' * 64}  b.jpg\n{sha256(b'gone')} *lost.jpg\n")
    assert ingest(tmp_path / "m", "--manifest", str(listing))[0] == 0
    batch = IntakeBatch.objects.get()
    results = dict(batch.manifest_entries.values_list("path", "result"))
    assert results == {
        "a.jpg": "match",
        "b.jpg": "mismatch",
        "lost.jpg": "missing",
        "c.jpg": "unlisted",
    }
    assert "manifest_mismatch" in item_flags(EvidenceItem.objects.get(original_path="b.jpg"))
    assert batch.custodian_manifest.sha256 == sha256(listing.read_bytes())
    assert batch.flagged == 1  # b.jpg, flagged by the list


def test_ingest_says_what_the_custodians_list_found(tmp_path, ingest):
    a, b, c = jpeg_bytes(20), jpeg_bytes(21), jpeg_bytes(22)
    write(tmp_path / "m" / "a.jpg", a)
    write(tmp_path / "m" / "b.jpg", b)
    write(tmp_path / "m" / "c.jpg", c)
    listing = tmp_path / "SHA256SUMS"
    listing.write_text(f"{sha256(a)}  a.jpg\n{'0' * 64}  b.jpg\n{sha256(b'gone')} *lost.jpg\n")

    code, out, err = ingest(tmp_path / "m", "--manifest", str(listing))
    assert code == 0, err
    refs = dict(EvidenceItem.objects.values_list("original_path", "reference"))
    assert ", 1 flagged," in out  # the mismatch
    assert (
        "custodian's list: 1 match, 1 MISMATCH, 1 listed but not received, "
        "1 received but not listed"
    ) in out
    mismatch = f"MISMATCH: b.jpg: sha256 listed {'0' * 64}, received {sha256(b)}"
    assert f"{mismatch} ({refs['b.jpg']})" in out
    assert "listed, not received: lost.jpg" in out
    assert f"received, not listed: c.jpg ({refs['c.jpg']})" in out

    code, out, err = ingest(tmp_path / "m", "--manifest", str(listing), "--json")  # a re-run
    summary = json.loads(out)
    assert summary["flagged"] == 1
    assert summary["custodian_manifest"] == {
        "match": [
            {
                "path": "a.jpg",
                "item": refs["a.jpg"],
                "algorithm": "sha256",
                "expected": sha256(a),
                "actual": sha256(a),
            }
        ],
        "mismatch": [
            {
                "path": "b.jpg",
                "item": refs["b.jpg"],
                "algorithm": "sha256",
                "expected": "0" * 64,
                "actual": sha256(b),
            }
        ],
        "missing": ["lost.jpg"],
        "unlisted": [{"path": "c.jpg", "item": refs["c.jpg"]}],
    }


def test_an_md5_list_makes_intake_compute_md5_too(tmp_path, ingest):
    import hashlib

    data = jpeg_bytes(23)
    write(tmp_path / "m" / "x.jpg", data)
    listing = write(tmp_path / "MD5SUMS", f"{hashlib.md5(data).hexdigest()}  x.jpg\n".encode())  # noqa: S324
    assert ingest(tmp_path / "m", "--manifest", str(listing))[0] == 0
    assert IntakeBatch.objects.get().manifest_entries.get().result == "match"
    assert StoredFile.objects.get(sha256=sha256(data)).md5 == hashlib.md5(data).hexdigest()  # noqa: S324


def test_an_outsider_cannot_ingest_into_a_case(tmp_path, case, capsys):
    from django.core.management import call_command
    from django.core.management.base import CommandError

    from tests.factories import UserFactory

    UserFactory(username="stranger")
    write(tmp_path / "m" / "x.jpg", jpeg_bytes(1))
    with pytest.raises(CommandError, match="may not add evidence"):
        call_command(
            "ingest",
            str(tmp_path / "m"),
            "--case",
            case.reference,
            "--source",
            "x",
            "--as",
            "stranger",
        )
    assert not EvidenceItem.objects.exists()


def test_near_identical_photos_share_a_group(tmp_path, ingest):
    write(tmp_path / "m" / "a.jpg", jpeg_bytes(30, quality=95))
    write(tmp_path / "m" / "a-recompressed.jpg", jpeg_bytes(30, quality=60))
    write(tmp_path / "m" / "other.jpg", jpeg_bytes(31))
    assert ingest(tmp_path / "m")[0] == 0
    a, again, other = (
        EvidenceItem.objects.get(original_path=p)
        for p in ("a.jpg", "a-recompressed.jpg", "other.jpg")
    )
    assert a.near_group is not None and a.near_group == again.near_group
    assert other.near_group is None


def test_the_metadata_export_has_one_record_per_item(tmp_path, ingest, case, capsys):
    import csv
    import io

    from django.core.management import call_command

    write(tmp_path / "m" / "a.jpg", jpeg_bytes(70))
    write(tmp_path / "m" / "empty.jpg", b"")
    assert ingest(tmp_path / "m")[0] == 0
    call_command("evidence_metadata", "--case", case.reference, "--as", "taker")
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    by_path = {r["original_path"]: r for r in records}
    assert set(by_path) == {"a.jpg", "empty.jpg"}
    a = by_path["a.jpg"]
    assert a["sha256"] == sha256(jpeg_bytes(70)) and a["media_type"] == "image/jpeg"
    assert (a["camera_make"], a["camera_model"], a["date_taken"]) == (
        "Canon",
        "EOS 40D",
        "2013:08:21 10:15:00",
    )
    assert a["gps_latitude"] == pytest.approx(33.51) and a["orientation"] == 1
    assert by_path["empty.jpg"]["flags"][0]["code"] == "empty"

    call_command("evidence_metadata", "--case", case.reference, "--format", "csv", "--as", "taker")
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert {r["original_path"] for r in rows} == {"a.jpg", "empty.jpg"}
    assert next(r for r in rows if r["original_path"] == "empty.jpg")["flags"].startswith(
        "empty: zero-byte"
    )
    assert AuditEntry.objects.filter(action="evidence.export_metadata").count() == 2


def test_bytes_already_stored_are_re_verified_and_a_changed_copy_is_recorded(tmp_path, case, taker):
    from evidence.intake.pipeline import ingest_path

    data = jpeg_bytes(90)
    write(tmp_path / "a" / "x.jpg", data)
    first = ingest_path(actor=taker, case=case, path=tmp_path / "a", acquired_from="A", jobs=1)
    stored = Path(evidence_storage().path(first.batch.items.get().original.storage_key))
    stored.chmod(0o644)
    stored.write_bytes(b"tampered")
    write(tmp_path / "b" / "y.jpg", data)
    second = ingest_path(actor=taker, case=case, path=tmp_path / "b", acquired_from="B", jobs=1)
    item = second.batch.items.get()
    assert item.custody_events.get(action="acquired").hash_result == "mismatch"
    assert item.integrity == "changed" and "stored_copy_changed" in item_flags(item)
    assert stored.read_bytes() == b"tampered"  # recorded loudly, never silently "fixed"
    write(tmp_path / "c" / "z.jpg", jpeg_bytes(91))
    write(tmp_path / "d" / "z.jpg", jpeg_bytes(91))
    ingest_path(actor=taker, case=case, path=tmp_path / "c", acquired_from="C", jobs=1)
    again = ingest_path(actor=taker, case=case, path=tmp_path / "d", acquired_from="D", jobs=1)
    event = again.batch.items.get().custody_events.get(action="acquired")
    assert (event.hash_result, event.notes) == (
        "match",
        "hashed while read; the copy already in the store was re-verified",
    )


def test_a_reused_mount_point_with_another_medium_opens_a_new_batch(tmp_path, case, taker):
    from evidence.intake.pipeline import ingest_path

    mount = tmp_path / "usb"
    write(mount / "a.jpg", jpeg_bytes(92))
    first = ingest_path(actor=taker, case=case, path=mount, acquired_from="Witness A", jobs=1)
    (mount / "a.jpg").unlink()
    write(mount / "b.jpg", jpeg_bytes(93))
    second = ingest_path(actor=taker, case=case, path=mount, acquired_from="Witness B", jobs=1)
    assert second.batch.pk != first.batch.pk
    assert EvidenceItem.objects.get(original_path="b.jpg").provenance.acquired_from == "Witness B"
    assert second.batch.custody_events.filter(action="acquired", item=None).exists()


def test_a_filename_with_a_tab_or_line_break_cannot_forge_a_row_of_the_intake_manifest(
    tmp_path, ingest
):
    forged = f"{'0' * 64}\t1\tforged.jpg"
    write(tmp_path / "m" / f"evil\n{forged}", jpeg_bytes(97))
    write(tmp_path / "m" / "plain.jpg", jpeg_bytes(98))
    assert ingest(tmp_path / "m")[0] == 0
    batch = IntakeBatch.objects.get()
    rows = Path(evidence_storage().path(batch.manifest.storage_key)).read_text().splitlines()
    assert rows[0] == "# sha256\tsize\tpath (escaped in paths: \\\\ \\t \\n \\r)"
    assert len(rows) == 3
    assert [row.split("\t")[2] for row in rows[1:]] == [
        "evil\\n" + forged.replace("\t", "\\t"),
        "plain.jpg",
    ]


def test_another_card_at_the_same_mount_point_is_taken_in_not_skipped(tmp_path, case, taker):
    from evidence.intake.pipeline import ingest_path

    mount = tmp_path / "sdcard"
    card_a, card_b = jpeg_bytes(95, size=(64, 48)), jpeg_bytes(96, size=(320, 240))
    write(mount / "DCIM" / "IMG_0001.JPG", card_a)
    first = ingest_path(actor=taker, case=case, path=mount, acquired_from="W", jobs=1)
    again = ingest_path(actor=taker, case=case, path=mount, acquired_from="W", jobs=1)
    assert (again.batch.pk, again.new_items) == (first.batch.pk, 0)  # the same card

    write(mount / "DCIM" / "IMG_0001.JPG", card_b)  # another card, the same names
    second = ingest_path(actor=taker, case=case, path=mount, acquired_from="W", jobs=1)
    assert second.batch.pk != first.batch.pk
    assert second.new_items == 1
    assert second.batch.items.get().original.sha256 == sha256(card_b)

    archive = tmp_path / "export.zip"
    _zip(archive, [("IMG_0001.JPG", card_a)])
    from_zip = ingest_path(actor=taker, case=case, path=archive, acquired_from="W", jobs=1)
    _zip(archive, [("IMG_0001.JPG", card_b)])  # another archive saved under the same name
    other_zip = ingest_path(actor=taker, case=case, path=archive, acquired_from="W", jobs=1)
    assert other_zip.batch.pk != from_zip.batch.pk
    assert other_zip.batch.items.get().original.sha256 == sha256(card_b)


def test_two_runs_of_one_drive_started_at_once_share_one_batch(tmp_path, case, taker, monkeypatch):
    """The other run opens its batch just after this one looked for one: this run finds
    it under the case's intake lock, is refused the claim, and takes nothing in twice."""
    import socket

    from evidence import services
    from evidence.intake.pipeline import ingest_path
    from evidence.services import batches

    write(tmp_path / "usb" / "a.jpg", jpeg_bytes(99))
    real, calls = services.resumable_batch, []

    def other_run_opens_meanwhile(**where):
        calls.append(where)
        if len(calls) == 1:  # this run's first look: nothing yet; then the other run opens
            other = batches._create_batch(
                actor=taker, **{k: where[k] for k in where if k != "files"}
            )
            IntakeBatch.objects.filter(pk=other.pk).update(claimed_by=f"{socket.gethostname()}:1")
            return None
        return real(**where)

    monkeypatch.setattr(services, "resumable_batch", other_run_opens_meanwhile)
    monkeypatch.setattr(batches, "resumable_batch", other_run_opens_meanwhile)
    with pytest.raises(RuntimeError, match="is being taken in by"):
        ingest_path(actor=taker, case=case, path=tmp_path / "usb", acquired_from="W", jobs=1)
    assert IntakeBatch.objects.count() == 1
    assert not EvidenceItem.objects.exists()


def test_a_live_ingest_keeps_its_batch_however_old_its_heartbeat(case, taker):
    import socket
    from datetime import timedelta

    from django.utils import timezone

    from evidence import services

    batch = IntakeBatchFactory(created_by=taker, case=case, source_root="/x", acquired_from="A")
    # pid 1 is alive: an ingest still hashing one huge video since its last heartbeat
    IntakeBatch.objects.filter(pk=batch.pk).update(
        claimed_by=f"{socket.gethostname()}:1", heartbeat_at=timezone.now() - timedelta(hours=1)
    )
    assert not services.claim_batch(batch)
    IntakeBatch.objects.filter(pk=batch.pk).update(claimed_by=f"{socket.gethostname()}:999999999")
    assert services.claim_batch(batch)  # its owner died: taken over


def test_a_zip_of_many_small_bombs_is_refused_as_a_whole(tmp_path, ingest):
    archive = tmp_path / "many.zip"
    with zipfile.ZipFile(archive, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for n in range(300):  # each member under the per-member floor; together >200:1
            zf.writestr(f"z{n}.bin", b"\x00" * (64 << 10))
    code, _out, err = ingest(archive)
    assert code != 0 and "as a whole" in err
    assert not EvidenceItem.objects.exists()


def _store_bytes() -> int:
    return sum(f.stat().st_size for f in evidence_storage().root.rglob("*") if f.is_file())


def test_a_small_zip_of_many_distinct_one_mib_members_writes_nothing_of_them(tmp_path, ingest):
    archive = tmp_path / "many.zip"
    with zipfile.ZipFile(archive, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for n in range(300):  # each 1 MiB, none over the per-member floor, each different
            zf.writestr(f"{n:03d}.bin", n.to_bytes(2) * (1 << 19))
    assert archive.stat().st_size < 400_000  # some 300 MiB declared inside

    code, _out, err = ingest(archive)
    assert code != 0 and "expands" in err and "as a whole" in err
    assert not EvidenceItem.objects.exists()
    assert _store_bytes() == 0  # no member written


def _photo(seed: int) -> bytes:
    """A camera's JPEG: detail everywhere, so the ZIP around it hardly compresses it."""
    import random

    grain = Image.frombytes("RGB", (320, 240), random.Random(seed).randbytes(320 * 240 * 3))
    out = io.BytesIO()
    grain.save(out, "JPEG", quality=90)
    return out.getvalue()


def test_a_zip_of_photos_expanding_about_one_to_one_is_taken_in(tmp_path, ingest, monkeypatch):
    from evidence.intake import sources

    monkeypatch.setattr(sources, "ZIP_WHOLE_FLOOR", 0)  # the ratio alone decides
    photos = {f"DCIM/IMG_{n:04d}.JPG": _photo(200 + n) for n in range(12)}
    archive = tmp_path / "photos.zip"
    with zipfile.ZipFile(archive, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name, data in photos.items():
            zf.writestr(name, data)
    assert sum(map(len, photos.values())) < 1.05 * archive.stat().st_size  # about 1:1

    code, out, err = ingest(archive, "--json")
    assert code == 0, err
    assert json.loads(out)["stored"] == 12
    got = dict(EvidenceItem.objects.values_list("original_path", "original__sha256"))
    assert got == {name: sha256(data) for name, data in photos.items()}


def test_the_csv_metadata_export_never_hands_a_spreadsheet_a_formula(
    tmp_path, ingest, case, capsys
):
    import csv
    import io

    from django.core.management import call_command

    south_west = ((33, 30, 36), "S", (36, 17, 24), "W")
    write(tmp_path / "m" / "=HYPERLINK(1).jpg", jpeg_bytes(95, gps=south_west))
    assert ingest(tmp_path / "m")[0] == 0
    call_command("evidence_metadata", "--case", case.reference, "--format", "csv", "--as", "taker")
    (row,) = csv.DictReader(io.StringIO(capsys.readouterr().out))
    assert row["original_path"] == "'=HYPERLINK(1).jpg"
    # A south or west position stays a number a spreadsheet can sort and map.
    assert (row["gps_latitude"], row["gps_longitude"]) == ("-33.51", "-36.29")


def test_the_metadata_export_needs_a_member_who_may_take_copies_and_is_audited_first(
    tmp_path, ingest, cast, capsys
):
    from django.core.management import call_command
    from django.core.management.base import CommandError

    write(tmp_path / "m" / "a.jpg", jpeg_bytes(96))
    assert ingest(tmp_path / "m")[0] == 0
    for refused in ("observer", "outsider"):
        with pytest.raises(CommandError, match="may not export"):
            call_command("evidence_metadata", "--case", cast.case.reference, "--as", refused)
    assert capsys.readouterr().out == ""
    assert not AuditEntry.objects.filter(action="evidence.export_metadata").exists()

    class Broken(io.StringIO):
        def write(self, text):
            raise BrokenPipeError  # the reader went away at the first record

    with pytest.raises(BrokenPipeError):
        call_command(
            "evidence_metadata", "--case", cast.case.reference, "--as", "lawyer", stdout=Broken()
        )
    entry = AuditEntry.objects.get(action="evidence.export_metadata")
    assert (entry.actor, entry.details["items"]) == (cast.lawyer, 1)


def test_the_metadata_exports_help_says_what_it_writes_and_who_may_run_it(
    tmp_path, ingest, cast, capsys
):
    from django.core.management import call_command
    from django.core.management.base import CommandError

    from evidence.management.commands.evidence_metadata import Command
    from tests.factories import UserFactory

    parser = Command().create_parser("manage.py", "evidence_metadata")
    help_text = " ".join(parser.format_help().split())
    write(tmp_path / "m" / "a.jpg", jpeg_bytes(97))
    assert ingest(tmp_path / "m")[0] == 0
    call_command("evidence_metadata", "--case", cast.case.reference, "--as", "lawyer")
    record = json.loads(capsys.readouterr().out.splitlines()[0])
    assert all(field in help_text for field in record)  # every field it writes is named
    assert "camera clock as recorded in the file" in help_text
    assert "a lead, investigator or lawyer" in help_text and "audit log" in help_text
    # It runs as a named member, never as a superuser it guesses (who is no member).
    assert "superuser" not in help_text
    UserFactory(username="root", is_superuser=True)
    with pytest.raises(CommandError, match="--as"):
        call_command("evidence_metadata", "--case", cast.case.reference)
    assert AuditEntry.objects.filter(action="evidence.export_metadata").count() == 1


def test_intake_workers_start_without_django():
    """The per-file steps run in worker processes that never touch the database: they
    import no part of Django, so none can, and each starts in a fraction of the time."""
    code = (
        "import sys, evidence.intake.steps\n"
        "loaded = sorted(m for m in sys.modules if m.split('.')[0] == 'django')\n"
        "print(','.join(loaded))\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    assert out.stdout.strip() == ""


def test_custody_notes_never_tell_whether_another_case_holds_the_same_bytes(
    tmp_path, case, other_case, taker
):
    from evidence.intake.pipeline import ingest_path
    from tests.factories import MembershipFactory

    MembershipFactory(user=taker, case=other_case, role="investigator")
    write(tmp_path / "elsewhere" / "x.jpg", jpeg_bytes(94))
    write(tmp_path / "here" / "x.jpg", jpeg_bytes(94))
    ingest_path(
        actor=taker, case=other_case, path=tmp_path / "elsewhere", acquired_from="A", jobs=1
    )
    run = ingest_path(actor=taker, case=case, path=tmp_path / "here", acquired_from="B", jobs=1)
    item = run.batch.items.get()
    event = item.custody_events.get(action="acquired")
    assert (event.hash_result, event.notes) == ("match", "hashed while first read")
    assert not item.is_duplicate
