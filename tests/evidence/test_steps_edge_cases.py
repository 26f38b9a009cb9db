"""Intake on the edges: EXIF that is odd or broken, names that do or do not lie, a full
disk under a thumbnail, a damaged ZIP member, a file too big to hold in memory."""

import errno
import io
import json
import os
import struct
import zipfile
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from PIL import Image

from evidence import imaging
from evidence.intake import steps
from evidence.intake.payload import SourceFile
from evidence.models import Derivative, EvidenceItem, IntakeBatch
from evidence.originals import WriteOnceStore
from evidence.storage import evidence_storage
from tests.evidence.conftest import sha256
from tests.evidence.helpers import item_flags, stored_bytes
from tests.evidence.images import jpeg_bytes, write

pytestmark = pytest.mark.django_db


# -- EXIF written byte by byte (Pillow will not write a zero denominator) -----------------
ASCII, SHORT, RATIONAL, DOUBLE = 2, 3, 5, 12


def _tiff(ifd0: dict, exif: dict | None = None, gps: dict | None = None) -> bytes:
    """A little-endian TIFF header and IFDs: {tag: (type, values)}; sub-IFDs linked."""
    ifds = [dict(ifd0)]
    pointers = []
    for tag, sub in ((0x8769, exif), (0x8825, gps)):
        if sub is not None:
            pointers.append((tag, len(ifds)))
            ifds.append(dict(sub))
    for tag, _ in pointers:
        ifds[0][tag] = (4, [0])  # a LONG offset, filled in below
    offsets = [8]
    for ifd in ifds[:-1]:
        offsets.append(offsets[-1] + 2 + 12 * len(ifd) + 4)
    for tag, index in pointers:
        ifds[0][tag] = (4, [offsets[index]])
    data_at = offsets[-1] + 2 + 12 * len(ifds[-1]) + 4
    packers = {ASCII: None, SHORT: "<H", 4: "<I", RATIONAL: "<II", DOUBLE: "<d"}
    out, data = b"II*\x00" + struct.pack("<I", 8), b""
    for ifd in ifds:
        out += struct.pack("<H", len(ifd))
        for tag in sorted(ifd):
            kind, values = ifd[tag]
            if kind == ASCII:
                raw, count = values.encode() + b"\x00", len(values) + 1
            else:
                fmt = packers[kind]
                raw = b"".join(
                    struct.pack(fmt, *(v if isinstance(v, tuple) else (v,))) for v in values
                )
                count = len(values)
            if len(raw) <= 4:
                out += struct.pack("<HHI", tag, kind, count) + raw.ljust(4, b"\x00")
            else:
                out += struct.pack("<HHII", tag, kind, count, data_at + len(data))
                data += raw + b"\x00" * (len(raw) % 2)
        out += b"\x00" * 4
    return out + data


def _photo(tiff: bytes, size=(320, 240)) -> bytes:
    img = Image.new("RGB", size, (200, 30, 30))
    img.paste((30, 30, 200), (0, 0, size[0] // 2, size[1] // 2))
    out = io.BytesIO()
    img.save(out, "JPEG", quality=90, exif=b"Exif\x00\x00" + tiff)
    return out.getvalue()


DAMASCUS = {2: (RATIONAL, [(33, 1), (30, 1), (36, 1)]), 4: (RATIONAL, [(36, 1), (17, 1), (24, 1)])}


def test_exif_numbers_are_kept_as_read_not_turned_into_fractions(tmp_path, ingest):
    write(tmp_path / "m" / "a.jpg", jpeg_bytes(1, orientation=6))
    assert ingest(tmp_path / "m")[0] == 0
    provenance = EvidenceItem.objects.get().provenance
    assert provenance.metadata["Orientation"] == 6  # was "6/1"
    assert provenance.metadata["GPSLatitude"] == ["33/1", "30/1", "36/1"]  # rationals stay
    assert provenance.orientation == 6


def test_an_orientation_outside_one_to_eight_is_flagged_and_not_used(tmp_path, ingest):
    write(tmp_path / "m" / "odd.jpg", jpeg_bytes(2, orientation=40000))
    write(tmp_path / "m" / "zero.jpg", _photo(_tiff({274: (SHORT, [0])})))
    assert ingest(tmp_path / "m")[0] == 0
    for name, raw in (("odd.jpg", 40000), ("zero.jpg", 0)):
        item = EvidenceItem.objects.get(original_path=name)
        # Not in the SMALLINT column (PostgreSQL refused 40000 and the whole chunk with it).
        assert item.provenance.orientation is None
        assert item.provenance.metadata["Orientation"] == raw  # kept as read
        assert str(raw) in item_flags(item)["exif_orientation_invalid"]
        thumb = Derivative.objects.get(original=item.original, kind="thumbnail")
        assert (thumb.width, thumb.height) == (256, 192)  # shown as stored, not turned


def test_a_position_without_its_north_south_or_east_west_is_kept_and_flagged(tmp_path, ingest):
    write(tmp_path / "m" / "norefs.jpg", _photo(_tiff({271: (ASCII, "Canon")}, gps=DAMASCUS)))
    south_only = {**DAMASCUS, 1: (ASCII, "S")}
    write(tmp_path / "m" / "lat-only.jpg", _photo(_tiff({271: (ASCII, "Canon")}, gps=south_only)))
    complete = {**DAMASCUS, 1: (ASCII, "N"), 3: (ASCII, "E")}
    write(tmp_path / "m" / "ok.jpg", _photo(_tiff({271: (ASCII, "Canon")}, gps=complete)))
    assert ingest(tmp_path / "m")[0] == 0
    norefs = EvidenceItem.objects.get(original_path="norefs.jpg")
    assert float(norefs.provenance.gps_latitude) == pytest.approx(33.51)
    assert float(norefs.provenance.gps_longitude) == pytest.approx(36.29)
    reason = item_flags(norefs)["gps_ref_missing"]
    assert "GPSLatitudeRef missing" in reason and "GPSLongitudeRef missing" in reason
    lat_only = EvidenceItem.objects.get(original_path="lat-only.jpg")
    assert float(lat_only.provenance.gps_latitude) == pytest.approx(-33.51)
    reason = item_flags(lat_only)["gps_ref_missing"]
    assert "GPSLongitudeRef" in reason and "GPSLatitudeRef" not in reason
    assert "gps_ref_missing" not in item_flags(EvidenceItem.objects.get(original_path="ok.jpg"))


def test_zero_denominators_and_nan_in_exif_never_stop_intake(tmp_path, ingest):
    tiff = _tiff(
        {271: (ASCII, "Canon"), 282: (RATIONAL, [(72, 0)]), 283: (RATIONAL, [(0, 0)])},
        exif={33434: (RATIONAL, [(1, 0)]), 36867: (ASCII, "2013:08:21 10:15:00")},
        gps={
            1: (ASCII, "N"),
            2: (RATIONAL, [(33, 1), (30, 0), (36, 1)]),
            3: (ASCII, "E"),
            4: (RATIONAL, [(36, 1), (17, 1), (24, 1)]),
            6: (DOUBLE, [float("nan")]),  # JSON has no NaN: it failed the chunk's insert
        },
    )
    write(tmp_path / "m" / "broken.jpg", _photo(tiff))
    write(tmp_path / "m" / "fine.jpg", jpeg_bytes(3))
    code, out, err = ingest(tmp_path / "m", "--json")
    assert code == 0, err
    assert json.loads(out)["stored"] == 2
    item = EvidenceItem.objects.get(original_path="broken.jpg")
    md = item.provenance.metadata
    assert md["GPSLatitude"] == ["33/1", "30/0", "36/1"] and md["GPSAltitude"] == "nan"
    assert item.provenance.taken_at == "2013:08:21 10:15:00"
    assert item.provenance.gps_latitude is None and "gps_invalid" in item_flags(item)
    assert Derivative.objects.filter(original=item.original, kind="thumbnail").exists()


# -- names and contents --------------------------------------------------------------------
def _zip_bytes(members: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return out.getvalue()


def _png() -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (8, 8), (1, 2, 3)).save(out, "PNG")
    return out.getvalue()


def _ftyp(brand: bytes) -> bytes:
    return struct.pack(">I", 24) + b"ftyp" + brand + b"\x00\x00\x00\x00" + brand + b"mif1"


NORMAL = {
    "interview.wav": b"RIFF\x24\x00\x00\x00WAVEfmt " + bytes(200),
    "long-interview.wav": b"RF64\xff\xff\xff\xffWAVEds64" + bytes(200),
    "report.docx": _zip_bytes({"word/document.xml": b"<w:document/>"}),
    "list.xlsx": _zip_bytes({"xl/workbook.xml": b"<workbook/>"}),
    "slides.pptx": _zip_bytes({"ppt/presentation.xml": b"<p/>"}),
    "letter.odt": _zip_bytes({"mimetype": b"application/vnd.oasis.opendocument.text"}),
    "victims.csv": "name,town\nسمير,حمص\n".encode(),
    "data.json": b'{"a": 1}\n',
    "feed.xml": b"<?xml version='1.0'?><a/>\n",
    "page.html": b"<!doctype html><p>hi</p>\n",
    "notes.md": b"# Notes\n",
    "old-arabic.txt": "شهادة مكتوبة بترميز قديم".encode("cp1256"),
    "clip.mkv": b"\x1aE\xdf\xa3" + bytes(100),
    "clip.webm": b"\x1aE\xdf\xa3" + bytes(100),
    "phone.3gp": _ftyp(b"3gp4") + bytes(100),
    "voice.amr": b"#!AMR\n" + bytes(range(256)) * 2,
    "song.mp3": b"\xff\xfb\x90\x64" + bytes(range(256)),  # no ID3 tag
    "raw.CR2": b"II*\x00\x10\x00\x00\x00CR\x02\x00" + bytes(100),
    "raw.NEF": b"MM\x00*\x00\x00\x00\x08" + bytes(100),
    "raw.DNG": b"II*\x00\x08\x00\x00\x00" + bytes(100),
    "iphone.heic": _ftyp(b"mif1") + bytes(100),
    "burst.heic": _ftyp(b"msf1") + bytes(100),
    "other.heic": _ftyp(b"heix") + bytes(100),
    "still.heif": _ftyp(b"heic") + bytes(100),
    "photo.jpeg": jpeg_bytes(4),
}


def test_normal_files_are_not_called_liars(tmp_path, ingest):
    for name, data in NORMAL.items():
        write(tmp_path / "m" / name, data)
    assert ingest(tmp_path / "m")[0] == 0
    flagged = {
        item.original_path: item_flags(item)["extension_mismatch"]
        for item in EvidenceItem.objects.all()
        if "extension_mismatch" in item_flags(item)
    }
    assert flagged == {}
    assert EvidenceItem.objects.get(original_path="voice.amr").kind == "audio"
    assert EvidenceItem.objects.get(original_path="long-interview.wav").kind == "audio"
    assert EvidenceItem.objects.get(original_path="burst.heic").kind == "photo"


def _id3(then: bytes, padding: int = 300) -> bytes:
    """An ID3v2.4 tag (padding only; its size in "syncsafe" 7-bit bytes) before ``then``."""
    size = bytes((padding >> shift) & 0x7F for shift in (21, 14, 7, 0))
    return b"ID3\x04\x00\x00" + size + bytes(padding) + then


TYPED = {
    # Notepad's "Unicode": UTF-16 behind a byte order mark, little- or big-endian; a
    # control character (an escape of a coloured log, a Ctrl-Z at the end) keeps it text.
    "transcript.txt": ("\ufeffشكوى من سجن حلب\r\n".encode("utf-16-le"), "text/plain"),
    "statement.txt": ("\ufeffشكوى\x1b[0m\n\x1a".encode("utf-16-be"), "text/plain"),
    "tagged.flac": (_id3(b"fLaC\x00\x00\x00\x22" + bytes(100)), "audio/flac"),
    # Cover art makes a tag far longer than the first few kilobytes looked at.
    "album.flac": (_id3(b"fLaC\x00\x00\x00\x22" + bytes(100), padding=300_000), "audio/flac"),
    "tagged.mp3": (_id3(b"\xff\xfb\x90\x64" + bytes(100)), "audio/mpeg"),
    "tagged.wav": (_id3(b"RIFF\x24\x00\x00\x00WAVEfmt " + bytes(100)), "audio/wav"),
    # AAC in ADTS frames, bare or behind a tag (as packed audio of a streamed video is).
    "voice.aac": (b"\xff\xf1\x50\x80\x02\x1f\xfc" + bytes(100), "audio/aac"),
    "segment.aac": (_id3(b"\xff\xf9\x50\x80\x02\x1f\xfc" + bytes(100)), "audio/aac"),
    # A byte order mark followed by NULs is not text.
    "blob.dat": (b"\xff\xfe" + b"\x00\x00\x02\x00" * 100, "application/octet-stream"),
}


def test_tagged_audio_and_utf16_text_are_typed_as_what_they_are(tmp_path, ingest):
    for name, (data, _) in TYPED.items():
        write(tmp_path / "m" / name, data)
    assert ingest(tmp_path / "m")[0] == 0
    for name, (data, media_type) in TYPED.items():
        item = EvidenceItem.objects.get(original_path=name)
        flags = item_flags(item)
        # The audio here is a header and no sound: said so, and typed all the same.
        assert (flags.pop("no_decodable_stream", None) is not None) == (item.kind == "audio")
        assert (item.original.media_type, flags) == (media_type, {}), name
        assert stored_bytes(item) == data
    assert EvidenceItem.objects.get(original_path="transcript.txt").kind == "document"
    # Only a file's head kept (too big for memory) and a tag longer than it: an MP3 by its
    # tag, as it was before tags were looked past.
    assert steps.sniff(_id3(b"fLaC", padding=5000)[: steps.SNIFF_BYTES]) == "audio/mpeg"
    # An AAC file named as an MP3 is still told apart from one.
    write(tmp_path / "n" / "song.mp3", TYPED["voice.aac"][0])
    assert ingest(tmp_path / "n")[0] == 0
    flags = item_flags(EvidenceItem.objects.get(original_path="song.mp3"))
    assert "content is audio/aac" in flags["extension_mismatch"]


LYING = {
    "photo.jpg": (_png(), "image/png"),
    "contract.pdf": (b"\x7fELF\x02\x01\x01" + bytes(200), "application/octet-stream"),
    "holiday.jpg": (_zip_bytes({"a.exe": b"MZ" + bytes(50)}), "application/zip"),
    "memo.docx": (jpeg_bytes(5), "image/jpeg"),
    "notes.txt": (_png(), "image/png"),
    "scan.png": (b"plain words\n", "text/plain"),
    "voice.wav": (b"OggS" + bytes(100), "audio/ogg"),
}


def test_files_whose_names_lie_are_still_flagged(tmp_path, ingest):
    for name, (data, _) in LYING.items():
        write(tmp_path / "m" / name, data)
    assert ingest(tmp_path / "m")[0] == 0
    for name, (_, content) in LYING.items():
        item = EvidenceItem.objects.get(original_path=name)
        assert f"content is {content}" in item_flags(item).get("extension_mismatch", ""), name


# -- a full disk under a thumbnail ----------------------------------------------------------
def test_a_thumbnail_the_disk_has_no_room_for_is_flagged_then_made_once_there_is(
    tmp_path, ingest, monkeypatch, capsys
):
    real = Path.write_bytes

    def disk_full_for_derivatives(self, data):
        if "derivatives" in self.parts:
            real(self, data[: len(data) // 2])  # half written, then the disk is full
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(self, data)

    monkeypatch.setattr(Path, "write_bytes", disk_full_for_derivatives)
    data = jpeg_bytes(6)
    write(tmp_path / "m" / "a.jpg", data)
    write(tmp_path / "m" / "copy of a.jpg", data)  # one original, one thumbnail to make
    write(tmp_path / "m" / "b.jpg", jpeg_bytes(8))
    code, _, err = ingest(tmp_path / "m")
    assert code == 0, err
    item = EvidenceItem.objects.get(original_path="a.jpg")
    assert stored_bytes(item) == data and item.original.sha256 == sha256(data)
    flags = item_flags(item)
    assert "No space left on device" in flags["derivative_failed"]
    assert "undecodable" not in flags
    assert item.provenance.width == 320 and item.phash is not None
    assert not Derivative.objects.exists()
    derivatives = Path(evidence_storage().root) / "derivatives"
    assert [p for p in derivatives.rglob("*") if p.is_file()] == []  # no half thumbnail

    # Room made on the disk; b.jpg's original changed in the store meanwhile.
    monkeypatch.undo()
    changed = EvidenceItem.objects.get(original_path="b.jpg")
    Path(evidence_storage().path(changed.original.storage_key)).chmod(0o644)
    Path(evidence_storage().path(changed.original.storage_key)).write_bytes(jpeg_bytes(9))
    with pytest.raises(CommandError, match="1 thumbnails made; 1 items still without one"):
        call_command("make_thumbnails")
    assert f"NOT MADE  {changed.case.reference} {changed.reference}" in capsys.readouterr().err
    thumb = Derivative.objects.get(original=item.original)
    stored = Path(evidence_storage().path(thumb.storage_key)).read_bytes()
    with Image.open(io.BytesIO(stored)) as img:
        assert img.size == (thumb.width, thumb.height) and max(img.size) == 256
    assert thumb.parameters == imaging.THUMBNAIL_PARAMETERS
    assert stored_bytes(item) == data  # the original untouched


# -- ZIP members ---------------------------------------------------------------------------
def _stored_zip(path: Path, members: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_STORED) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return path


def _data_offset(blob: bytes, info: zipfile.ZipInfo) -> int:
    name_len, extra_len = struct.unpack(
        "<HH", blob[info.header_offset + 26 : info.header_offset + 30]
    )
    return info.header_offset + 30 + name_len + extra_len


@pytest.mark.parametrize("limit", [steps.DECODE_LIMIT, 16], ids=["in memory", "streamed"])
def test_a_zip_member_with_a_bad_crc_is_stored_as_read_and_flagged(
    tmp_path, ingest, monkeypatch, limit
):
    monkeypatch.setattr(steps, "DECODE_LIMIT", limit)
    statement = "أقرّ بأن ما ورد أعلاه صحيح\n".encode() * 50
    archive = _stored_zip(tmp_path / "in.zip", {"statement.txt": statement, "a.jpg": jpeg_bytes(7)})
    blob = bytearray(archive.read_bytes())
    with zipfile.ZipFile(archive) as zf:
        at = _data_offset(bytes(blob), zf.getinfo("statement.txt")) + 100
    blob[at] ^= 0x01  # one bit flipped in the member's data, the CRC left as it was
    archive.write_bytes(bytes(blob))
    as_read = bytearray(statement)
    as_read[100] ^= 0x01

    code, out, err = ingest(archive, "--json")
    assert code == 0, err
    assert json.loads(out)["stored"] == 2
    item = EvidenceItem.objects.get(original_path="statement.txt")
    assert stored_bytes(item) == bytes(as_read)
    assert item.original.sha256 == sha256(bytes(as_read))  # the hash of the bytes as read
    assert "stored as read" in item_flags(item)["zip_crc_mismatch"]
    assert "zip_crc_mismatch" not in item_flags(EvidenceItem.objects.get(original_path="a.jpg"))


def test_zip_members_that_cannot_be_read_fail_with_a_clear_reason(tmp_path, ingest):
    members = {"secret.txt": b"s" * 100, "odd.txt": b"o" * 100, "fine.txt": b"f" * 100}
    archive = _stored_zip(tmp_path / "in.zip", members)
    blob = bytearray(archive.read_bytes())
    with zipfile.ZipFile(archive) as zf:
        infos = {i.filename: i for i in zf.infolist()}
    central = blob.index(b"PK\x01\x02")
    for name, field, value in (("secret.txt", 0, 0x1), ("odd.txt", 2, 99)):  # flags, method
        local = infos[name].header_offset
        entry = next(
            i
            for i in range(central, len(blob))
            if blob[i : i + 4] == b"PK\x01\x02"
            and struct.unpack("<I", blob[i + 42 : i + 46])[0] == local
        )
        struct.pack_into("<H", blob, local + 6 + field, value)
        struct.pack_into("<H", blob, entry + 8 + field, value)
    archive.write_bytes(bytes(blob))

    code, _, err = ingest(archive)
    assert "encrypted" in err, err
    assert code == 2
    assert EvidenceItem.objects.get().original_path == "fine.txt"
    reasons = {p["path"]: p["reason"] for p in IntakeBatch.objects.get().problems}
    assert "encrypted" in reasons["secret.txt"] and "password" in reasons["secret.txt"]
    assert "method 99" in reasons["odd.txt"] and "cannot be read" in reasons["odd.txt"]


# -- a file too big to decode -------------------------------------------------------------
def test_a_file_too_big_to_decode_keeps_only_its_head_in_memory(tmp_path, monkeypatch):
    monkeypatch.setattr(steps, "DECODE_LIMIT", 1 << 20)
    heads: list[int] = []
    real = WriteOnceStore.write_original

    def spy(self, chunks, keep_up_to=0, extra_digests=()):
        written = real(self, chunks, keep_up_to, extra_digests)
        heads.append(len(written.head))
        return written

    monkeypatch.setattr(WriteOnceStore, "write_original", spy)
    data = jpeg_bytes(8) + os.urandom(3 << 20)
    path = write(tmp_path / "big.jpg", data)
    (result,) = steps.process_many(
        [SourceFile(path="big.jpg", fs_path=str(path))], str(tmp_path / "s")
    )
    assert result.stored and result.sha256 == sha256(data) and result.size == len(data)
    assert result.media_type == "image/jpeg"
    assert [f["code"] for f in result.flags] == ["not_decoded"]
    assert heads == [steps.SNIFF_BYTES]  # not the first DECODE_LIMIT bytes


def test_every_file_goes_through_the_named_steps_in_this_order():
    assert [name for name, _ in steps.STEPS] == [
        "flag name",
        "read and store",
        "sniff type",
        "check empty",
        "check extension",
        "decode picture",
        "describe recording",
    ]


def test_an_empty_file_ends_its_way_at_the_step_that_finds_it_empty(tmp_path):
    path = write(tmp_path / "empty.jpg", b"")
    (result,) = steps.process_many(
        [SourceFile(path="empty.jpg", fs_path=str(path))], str(tmp_path / "s")
    )
    # No "extension_mismatch" (the step after): an empty file claims nothing.
    assert result.stored and [f["code"] for f in result.flags] == ["empty"]
