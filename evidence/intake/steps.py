"""Per-file intake steps, run in worker processes. No database access here.

read once while hashing → store → sniff type by magic bytes → EXIF without a full
decode → reduced decode (Pillow ``draft``) → thumbnail (EXIF orientation applied) →
perceptual hash. A failing step flags the file; only a failure to store it is an error.
"""

from __future__ import annotations

import hashlib
import io
import math
import mimetypes
import os
import warnings
import zipfile
import zlib
from collections import deque
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import datetime
from pathlib import Path, PurePosixPath
from typing import Any

import PIL
from PIL import Image

from evidence.originals import CHUNK, WriteOnceStore, derivative_key, original_key

from ..names import bidi_flag
from .payload import IntakeResult, SourceFile, Thumbnail

DECODE_LIMIT = 256 << 20  # files up to this size are kept in memory for decoding
SNIFF_BYTES = 4096  # what the type is told from
MAX_PIXELS = 90_000_000  # more is refused before decoding (a decompression bomb)
THUMBNAIL_SIZE = 256
THUMBNAIL_QUALITY = 80
PREVIEW_SIZE = 1024
# How a thumbnail is made, recorded with each one (and followed when one is made again).
THUMBNAIL_PARAMETERS = {
    "max": THUMBNAIL_SIZE,
    "quality": THUMBNAIL_QUALITY,
    "resample": "box",
    "exif_transpose": True,
}
Image.MAX_IMAGE_PIXELS = MAX_PIXELS  # Pillow refuses twice this outright, warns above it

# Magic bytes → media type, most specific first.
_MAGIC: list[tuple[int, bytes, str]] = [
    (0, b"\xff\xd8\xff", "image/jpeg"),
    (0, b"\x89PNG\r\n\x1a\n", "image/png"),
    (0, b"GIF87a", "image/gif"),
    (0, b"GIF89a", "image/gif"),
    (0, b"II*\x00", "image/tiff"),
    (0, b"MM\x00*", "image/tiff"),
    (0, b"BM", "image/bmp"),
    (0, b"%PDF-", "application/pdf"),
    (0, b"ID3", "audio/mpeg"),
    (0, b"OggS", "audio/ogg"),
    (0, b"fLaC", "audio/flac"),
    (0, b"\x1aE\xdf\xa3", "video/webm"),
    (0, b"PK\x03\x04", "application/zip"),
    (0, b"{\\rtf", "application/rtf"),
    (0, b"#!AMR-WB\n", "audio/amr-wb"),
    (0, b"#!AMR\n", "audio/amr"),
]
_FTYP = {
    b"heic": "image/heic",
    b"heix": "image/heic",
    b"hevc": "image/heic-sequence",
    b"mif1": "image/heif",
    b"msf1": "image/heif-sequence",
    b"avif": "image/avif",
    b"qt  ": "video/quicktime",
    b"M4A ": "audio/mp4",
}
DECODABLE = {"image/jpeg", "image/png", "image/gif", "image/tiff", "image/bmp", "image/webp"}
# Pillow plugins for those, and only those (never one that hands off to another program).
PIL_FORMATS = [media_type.split("/")[1].upper() for media_type in sorted(DECODABLE)]


def sniff(data: bytes) -> str:
    """The media type the bytes say they are, whatever the file's name claims: told from
    the first SNIFF_BYTES of ``data``, or of what follows an ID3 tag."""
    if data[:3] == b"ID3" and len(data) >= 10:
        # An ID3 tag is put in front of MP3s, and of FLAC, AAC or WAV files by some
        # taggers (cover art makes it long): what follows the tag says which, when the
        # data goes that far (a file too big for memory keeps only its head).
        size = 10 + sum((b & 0x7F) << (7 * (3 - i)) for i, b in enumerate(data[6:10]))
        size += 10 if data[5] & 0x10 else 0  # a footer
        inner = sniff(data[size : size + SNIFF_BYTES]) if size < len(data) else "audio/mpeg"
        return "audio/mpeg" if inner in _UNNAMED else inner
    head = data[:SNIFF_BYTES]
    if head[:1] == b"\xff" and len(head) > 1 and head[1] & 0xF6 == 0xF0:
        return "audio/aac"  # an ADTS frame: sync bits, then MPEG layer 00 (an MP3 has 01)
    for offset, magic, media_type in _MAGIC:
        if head[offset : offset + len(magic)] == magic:
            return media_type
    if head[:4] == b"RIFF" and head[8:12] in (b"WEBP", b"WAVE", b"AVI "):
        return {b"WEBP": "image/webp", b"WAVE": "audio/wav", b"AVI ": "video/x-msvideo"}[head[8:12]]
    if head[:4] in (b"RF64", b"BW64") and head[8:12] == b"WAVE":
        return "audio/wav"  # past 4 GB, as field recorders write (EBU RF64, ITU BW64)
    if head[4:8] == b"ftyp":
        return _FTYP.get(head[8:12], "video/mp4")
    if head and _looks_like_text(head):
        return "text/plain"
    return "application/octet-stream"


def _looks_like_text(sample: bytes) -> bool:
    """UTF-8 (ASCII included) without NULs, or UTF-16 behind its byte order mark (what
    Windows Notepad long saved as "Unicode", Arabic transcripts among them)."""
    if sample[:2] in (b"\xff\xfe", b"\xfe\xff") and sample[:4] != b"\xff\xfe\x00\x00":
        codec = "utf-16-le" if sample[:2] == b"\xff\xfe" else "utf-16-be"
        body = sample[2 : len(sample) - len(sample) % 2]
        try:
            text = body.decode(codec)
        except UnicodeDecodeError as exc:  # a surrogate pair cut at the sample's end
            text = body[: exc.start].decode(codec) if exc.start > len(body) - 4 else "\x00"
        return "\x00" not in text  # the rule UTF-8 text is held to below
    try:
        sample.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.start > len(sample) - 4  # a character cut at the sample's end
    return b"\x00" not in sample


def kind_of(media_type: str) -> str:
    top = media_type.split("/", 1)[0]
    if top == "image":
        return "photo"
    if top in ("video", "audio"):
        return top
    if media_type in ("application/pdf", "application/rtf", "text/plain"):
        return "document"
    return "digital"


# -- does the name lie about the content? ------------------------------------------------
# Python's built-in table (not the machine's /etc/mime.types: the same answer everywhere),
# completed with what evidence often arrives as. Raw camera formats listed are TIFF inside.
_MIMETYPES = mimetypes.MimeTypes()
_EXTENSION_TYPES = {
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".jpe": "image/jpeg",
    ".jfif": "image/jpeg",
    ".heic": "image/heic",
    ".heics": "image/heic-sequence",
    ".heif": "image/heif",
    ".heifs": "image/heif-sequence",
    ".hif": "image/heif",
    ".avif": "image/avif",
    ".cr2": "image/x-canon-cr2",
    ".nef": "image/x-nikon-nef",
    ".nrw": "image/x-nikon-nrw",
    ".dng": "image/x-adobe-dng",
    ".arw": "image/x-sony-arw",
    ".pef": "image/x-pentax-pef",
    ".srw": "image/x-samsung-srw",
    ".amr": "audio/amr",
    ".awb": "audio/amr-wb",
    ".flac": "audio/flac",
    ".ogg": "audio/ogg",
    ".oga": "audio/ogg",
    ".ogv": "video/ogg",
    ".opus": "audio/opus",
    ".m4a": "audio/mp4",
    ".m4v": "video/x-m4v",
    ".3gp": "video/3gpp",
    ".3g2": "video/3gpp2",
    ".mkv": "video/x-matroska",
    ".mka": "audio/x-matroska",
    ".webm": "video/webm",
    ".docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    ".xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    ".pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
    ".odt": "application/vnd.oasis.opendocument.text",
    ".ods": "application/vnd.oasis.opendocument.spreadsheet",
    ".odp": "application/vnd.oasis.opendocument.presentation",
    ".epub": "application/epub+zip",
    ".kmz": "application/vnd.google-earth.kmz",
    ".apk": "application/vnd.android.package-archive",
    ".jar": "application/java-archive",
}
# Types one file may honestly be named as: content and name conflict only across families.
_FAMILIES: dict[str, tuple[str, ...]] = {
    "jpeg": ("image/jpeg", "image/pjpeg"),
    "tiff": (
        "image/tiff",
        "image/x-canon-cr2",
        "image/x-nikon-nef",
        "image/x-nikon-nrw",
        "image/x-adobe-dng",
        "image/x-sony-arw",
        "image/x-pentax-pef",
        "image/x-samsung-srw",
    ),
    "bmp": ("image/bmp", "image/x-ms-bmp"),
    "heif": (
        "image/heic",
        "image/heif",
        "image/heic-sequence",
        "image/heif-sequence",
        "image/avif",
        "image/avif-sequence",
    ),
    "mp4": (
        "video/mp4",
        "video/quicktime",
        "video/x-m4v",
        "audio/mp4",
        "audio/x-m4a",
        "video/3gpp",
        "video/3gpp2",
        "audio/3gpp",
        "audio/3gpp2",
    ),
    "matroska": ("video/webm", "audio/webm", "video/x-matroska", "audio/x-matroska"),
    "wav": ("audio/wav", "audio/x-wav", "audio/wave", "audio/vnd.wave"),
    "ogg": ("audio/ogg", "video/ogg", "application/ogg", "audio/opus", "audio/vorbis"),
    "amr": ("audio/amr", "audio/amr-wb"),
    "aac": ("audio/aac", "audio/x-aac", "audio/aacp"),
    "rtf": ("application/rtf", "text/rtf"),
    "zip": (
        "application/zip",
        "application/x-zip-compressed",
        "application/java-archive",
        "application/vnd.android.package-archive",
        "application/vnd.google-earth.kmz",
    ),
    "text": (
        "text/plain",
        "application/json",
        "application/xml",
        "application/javascript",
        "application/x-sh",
        "application/x-yaml",
        "application/yaml",
        "application/toml",
        "application/sql",
        "application/x-subrip",
        "application/x-tex",
        "application/x-latex",
    ),
}
_FAMILY = {media_type: family for family, types in _FAMILIES.items() for media_type in types}
# Families whose every file starts with bytes ``sniff`` knows: content it cannot name is a
# conflict only with these. Text in a legacy encoding, an MP3 without an ID3 tag, an
# old QuickTime file without ``ftyp``: sniff cannot name them, yet they are what they say.
_MAGIC_REQUIRED = {
    "jpeg",
    "image/png",
    "image/gif",
    "tiff",
    "bmp",
    "image/webp",
    "heif",
    "application/pdf",
    "zip",
    "rtf",
    "audio/flac",
    "ogg",
    "matroska",
    "wav",
    "video/x-msvideo",
    "amr",
}
_UNNAMED = ("text/plain", "application/octet-stream")  # sniff found no magic bytes


def _family(media_type: str) -> str:
    media_type = media_type.lower()
    if family := _FAMILY.get(media_type):
        return family
    if media_type.endswith("+zip") or media_type.startswith(
        ("application/vnd.openxmlformats-officedocument.", "application/vnd.oasis.opendocument.")
    ):
        return "zip"  # office documents, EPUB: ZIP inside
    if media_type.startswith("text/") or media_type.endswith(("+xml", "+json")):
        return "text"
    return media_type


def _extension_type(name: str) -> str | None:
    ext = PurePosixPath(name).suffix.lower()
    if not ext:
        return None
    return (
        _EXTENSION_TYPES.get(ext)
        or _MIMETYPES.types_map[True].get(ext)
        or _MIMETYPES.types_map[False].get(ext)
    )


def extension_conflict(name: str, media_type: str) -> str | None:
    """The type ``name`` claims, if the content (typed by ``sniff``) is really another."""
    claimed = _extension_type(name)
    if claimed is None or claimed == "application/octet-stream":
        return None  # no claim
    want, have = _family(claimed), _family(media_type)
    if want == have or (media_type in _UNNAMED and want not in _MAGIC_REQUIRED):
        return None
    return claimed


# -- reading -----------------------------------------------------------------------
_open_zips: dict[str, tuple[tuple[int, ...], zipfile.ZipFile]] = {}


def _zip(path: str) -> zipfile.ZipFile:
    """The archive, opened once per worker: its directory is read once, not per member.
    Kept only while the file at ``path`` is the same one (a long-lived process may meet
    another archive saved under the same name)."""
    st = Path(path).stat()
    identity = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
    cached = _open_zips.get(path)
    if cached is not None and cached[0] == identity:
        return cached[1]
    if cached is not None:
        cached[1].close()
    zf = zipfile.ZipFile(path)
    _open_zips[path] = (identity, zf)
    return zf


def _chunks(source: SourceFile, result: IntakeResult | None = None) -> Iterator[bytes]:
    if source.fs_path is not None:
        with Path(source.fs_path).open("rb") as fh:
            while chunk := fh.read(CHUNK):
                yield chunk
        return
    if source.zip_path is None or source.zip_index is None:
        raise ValueError("a source needs a file or a ZIP member")
    zf = _zip(source.zip_path)
    info = zf.infolist()[source.zip_index]
    if info.flag_bits & 0x1:
        raise ValueError("encrypted ZIP member: it cannot be read without its password")
    try:
        member = zf.open(info)
    except (NotImplementedError, RuntimeError) as exc:
        method = zipfile.compressor_names.get(info.compress_type, "unknown")
        raise ValueError(
            f"ZIP member compressed with method {info.compress_type} ({method}), "
            f"which cannot be read here: {exc}"
        ) from exc
    # zipfile checks the CRC-32 after the last byte and raises, and the member would be
    # lost though every byte of it was read and hashed: the check is made here instead
    # (the same work), and a mismatch is flagged, the bytes kept as read.
    member._expected_crc = None
    crc = read = 0
    # zipfile stops at the declared size; count anyway, the limits were checked against
    # the declared sizes before this member was queued.
    with member:
        while chunk := member.read(CHUNK):
            read += len(chunk)
            if read > info.file_size:
                raise ValueError("ZIP member longer than its declared size")
            crc = zlib.crc32(chunk, crc)
            yield chunk
    if crc != info.CRC and result is not None:
        result.flag(
            "zip_crc_mismatch",
            f"CRC-32 of the bytes read is {crc:08x}, the archive says {info.CRC:08x}: the "
            "member is damaged in the archive; stored as read, its SHA-256 is of those bytes",
        )


# -- metadata ------------------------------------------------------------------------
def _plain(value: Any) -> Any:
    """EXIF values as JSON, kept as read (rationals as "num/den", text without NULs)."""
    # Numbers first: an int has a numerator and a denominator too (6 is not "6/1").
    if isinstance(value, int) or value is None:
        return value
    if isinstance(value, float):  # NaN and infinities are not JSON (jsonb refuses them)
        return value if math.isfinite(value) else str(value)
    if isinstance(value, bytes):
        return value.rstrip(b"\x00").decode("utf-8", "replace").replace("\x00", "")
    if isinstance(value, str):
        return value.rstrip("\x00").replace("\x00", "")
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    if hasattr(value, "numerator") and hasattr(value, "denominator"):
        return f"{value.numerator}/{value.denominator}"  # "1/0" too: kept as read
    return str(value)


def _degrees(dms: Any, ref: Any) -> float | None:
    try:
        d, m, s = (float(v) for v in dms)  # a zero denominator gives NaN, never raises
    except (TypeError, ValueError, ZeroDivisionError):
        return None
    value = d + m / 60 + s / 3600
    if not math.isfinite(value):
        return None
    if _ref(ref) in ("S", "W"):
        value = -value
    return round(value, 7)


def _ref(ref: Any) -> str:
    return "" if ref is None else str(_plain(ref)).strip().upper()


def valid_orientation(value: Any) -> int | None:
    """The EXIF orientation if it is one of the eight the standard defines, else None."""
    if isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= 8:
        return value
    return None


_TAGS = {271: "Make", 272: "Model", 274: "Orientation", 305: "Software", 306: "DateTime"}
_EXIF_TAGS = {36867: "DateTimeOriginal", 36868: "DateTimeDigitized", 36881: "OffsetTimeOriginal"}
_GPS_TAGS = {1: "GPSLatitudeRef", 2: "GPSLatitude", 3: "GPSLongitudeRef", 4: "GPSLongitude"}
_GPS_TAGS |= {5: "GPSAltitudeRef", 6: "GPSAltitude", 7: "GPSTimeStamp", 29: "GPSDateStamp"}


def read_exif(img: Image.Image, result: IntakeResult) -> None:
    """EXIF from the file's header: no pixel is decoded."""
    exif = img.getexif()
    if not exif:
        return
    md: dict[str, Any] = {name: _plain(exif[tag]) for tag, name in _TAGS.items() if tag in exif}
    sub = exif.get_ifd(0x8769)
    md |= {name: _plain(sub[tag]) for tag, name in _EXIF_TAGS.items() if tag in sub}
    gps = exif.get_ifd(0x8825)
    md |= {name: _plain(gps[tag]) for tag, name in _GPS_TAGS.items() if tag in gps}
    result.metadata = md
    result.camera_make = str(md.get("Make", ""))[:100]
    result.camera_model = str(md.get("Model", ""))[:100]
    result.taken_at = str(md.get("DateTimeOriginal") or md.get("DateTime") or "")[:40]
    if 274 in exif:
        result.orientation = valid_orientation(exif[274])
        if result.orientation is None:  # the raw value stays in the metadata
            result.flag(
                "exif_orientation_invalid",
                f"EXIF Orientation is {md['Orientation']!r}, not 1 to 8: not used, "
                "the thumbnail is not turned",
            )
    if 2 in gps and 4 in gps:
        _read_position(gps, result)


_REFS = ((1, "GPSLatitudeRef", ("N", "S"), "north"), (3, "GPSLongitudeRef", ("E", "W"), "east"))


def _read_position(gps: Any, result: IntakeResult) -> None:
    lat, lon = _degrees(gps[2], gps.get(1)), _degrees(gps[4], gps.get(3))
    if lat is None or lon is None or abs(lat) > 90 or abs(lon) > 180:
        result.flag("gps_invalid", "GPS position unreadable or out of range: not used")
        return
    result.gps = (lat, lon)
    # Without its reference a coordinate's sign is a guess: say so to the reviewer.
    assumed = [
        f"{name} {'missing' if not _ref(gps.get(tag)) else repr(_ref(gps.get(tag)))}, "
        f"taken as {default}"
        for tag, name, allowed, default in _REFS
        if _ref(gps.get(tag)) not in allowed
    ]
    if assumed:
        result.flag(
            "gps_ref_missing",
            "; ".join(assumed) + ": the position's sign is an assumption, check it",
        )


def taken_date(taken_at: str):
    try:
        return datetime.strptime(taken_at[:19], "%Y:%m:%d %H:%M:%S").date()  # noqa: DTZ007
    except ValueError:
        return None


# -- pixels ------------------------------------------------------------------------------
def dhash(img: Image.Image) -> int:
    """64-bit difference hash, as a signed integer (fits a BIGINT column)."""
    small = img.convert("L").resize((9, 8), Image.Resampling.BILINEAR)
    px = small.tobytes()
    bits = 0
    for row in range(8):
        base = row * 9
        for col in range(8):
            bits = (bits << 1) | (px[base + col] > px[base + col + 1])
    return bits - (1 << 64) if bits >= 1 << 63 else bits


# EXIF orientation → the turn that makes the picture upright (as ImageOps.exif_transpose).
_UPRIGHT = {
    2: Image.Transpose.FLIP_LEFT_RIGHT,
    3: Image.Transpose.ROTATE_180,
    4: Image.Transpose.FLIP_TOP_BOTTOM,
    5: Image.Transpose.TRANSPOSE,
    6: Image.Transpose.ROTATE_270,
    7: Image.Transpose.TRANSVERSE,
    8: Image.Transpose.ROTATE_90,
}


def make_reduced(
    img: Image.Image, size: int, orientation: int | None, resample: Image.Resampling
) -> Image.Image:
    """Decode at a reduced scale where the format allows (JPEG DCT scaling), then resize.

    Turned upright after shrinking, by the orientation already read from the EXIF: the
    same picture at a fraction of the cost, and the header is not parsed a second time.
    """
    img.draft("RGB", (size, size))
    if img.mode not in ("RGB", "L"):
        img = img.convert("RGB")
    img.thumbnail((size, size), resample, reducing_gap=2.0)
    turn = _UPRIGHT.get(valid_orientation(orientation) or 1)  # only the eight defined
    return img.transpose(turn) if turn is not None else img


def encode_jpeg(img: Image.Image, quality: int) -> bytes:
    out = io.BytesIO()
    img.save(out, "JPEG", quality=quality)
    return out.getvalue()


def decode_image(data: bytes, result: IntakeResult, storage: WriteOnceStore) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error", Image.DecompressionBombWarning)
        img = Image.open(io.BytesIO(data), formats=PIL_FORMATS)  # reads the header only
        result.width, result.height = img.size
        if img.width * img.height > MAX_PIXELS:
            result.flag(
                "decompression_bomb",
                f"{img.width} x {img.height} pixels claimed; not decoded (limit {MAX_PIXELS:,})",
            )
            return
        try:
            read_exif(img, result)
        except Exception as exc:
            result.flag("bad_metadata", f"EXIF unreadable: {exc}")
        # Area averaging: after the DCT-scaled decode the last step is less than 2:1,
        # where a box filter is as sharp as a bicubic one and a third of its cost.
        thumb = make_reduced(img, THUMBNAIL_SIZE, result.orientation, Image.Resampling.BOX)
    data = encode_jpeg(thumb, THUMBNAIL_QUALITY)
    key = derivative_key(result.sha256, "thumbnail", "jpg")
    result.phash = dhash(thumb)
    try:
        storage.write_derivative(key, data)
    except OSError as exc:  # a full disk, say: the picture is fine, its thumbnail is not
        result.flag(
            "derivative_failed",
            f"thumbnail not stored ({exc}); the original is stored, and `manage.py "
            "make_thumbnails` makes the thumbnail from it",
        )
        return
    result.thumbnail = Thumbnail(
        key,
        thumb.width,
        thumb.height,
        len(data),
        dict(THUMBNAIL_PARAMETERS),
    )


TOOL = f"Pillow {PIL.__version__}"


def _declared_size(source: SourceFile) -> int | None:
    if source.fs_path is not None:
        return os.stat(source.fs_path).st_size  # noqa: PTH116 (one syscall on the hot path)
    return source.declared_size


_writer: ThreadPoolExecutor | None = None


def _background() -> ThreadPoolExecutor:
    """One writer thread per process: it fsyncs an original while the caller decodes."""
    global _writer
    if _writer is None:
        _writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="athar-store")
    return _writer


def _read_and_store(
    source: SourceFile, storage: WriteOnceStore, result: IntakeResult, extra: tuple[str, ...]
) -> tuple[bytes, Future[bool] | None]:
    """Read the file once. A small file is hashed in memory and stored by a background
    thread (its fsync overlaps the decode); a large one streams through the hash."""
    declared = _declared_size(source)
    if declared is not None and declared <= DECODE_LIMIT:
        if source.fs_path is not None:
            data = Path(source.fs_path).read_bytes()  # one buffer, no copy to join
        else:
            data = b"".join(_chunks(source, result))
        result.sha256 = hashlib.sha256(data).hexdigest()
        for name in extra:
            setattr(result, name, hashlib.new(name, data).hexdigest())
        result.size, result.storage_key = len(data), original_key(result.sha256)
        return data, _background().submit(storage.write_original_bytes, data, result.sha256)
    # Too big to decode: only the first bytes are kept, to sniff the type (an unknown
    # size may still turn out small, so up to the limit is kept then).
    keep = SNIFF_BYTES if declared is not None else DECODE_LIMIT
    written = storage.write_original(_chunks(source, result), keep, extra)
    result.sha256, result.size, result.storage_key = written.sha256, written.size, written.key
    result.md5, result.sha1 = written.md5, written.sha1
    if not written.created:
        _check_existing(storage, result)
    return written.head, None


def _check_existing(storage: WriteOnceStore, result: IntakeResult) -> None:
    """These bytes were stored before: the stored copy must still be them."""
    if storage.verify_existing(result.storage_key, result.sha256):
        result.existing = "match"
    else:
        result.existing = "mismatch"
        result.flag(
            "stored_copy_changed",
            "the copy already in the store no longer matches its SHA-256; it was not overwritten",
        )


WRITE_BEHIND = 64 << 20  # bytes of originals at most waiting for the writer thread


def _start(
    source: SourceFile, storage: WriteOnceStore, extra: tuple[str, ...]
) -> tuple[IntakeResult, Future[bool] | None]:
    """Read, hash and describe one source; its original may still be being written."""
    result = IntakeResult(source=source, flags=[dict(code=c, reason=r) for c, r in source.flags])
    if flag := bidi_flag(source.path):
        result.flags.append(flag)
    writer = None
    try:
        data, writer = _read_and_store(source, storage, result, extra)
        _describe(data, result, storage)
    except Exception as exc:  # reported with the file's path; the batch goes on
        if writer is not None:
            writer.exception()  # the write has ended, one way or the other, before we go on
            writer = None
        result.error = f"{type(exc).__name__}: {exc}"
    return result, writer


def _finish(result: IntakeResult, writer: Future[bool] | None, storage: WriteOnceStore) -> None:
    """Wait until the original is durably stored (or failed to be)."""
    if writer is None:
        return
    try:
        if not writer.result():  # raises what the writer raised
            _check_existing(storage, result)
    except Exception as exc:
        result.error = f"{type(exc).__name__}: {exc}"


def process_many(
    sources: list[SourceFile], root: str, extra_digests: tuple[str, ...] = ()
) -> list[IntakeResult]:
    """Run every per-file step for each source; never raises for a bad file.

    Each original's write and fsync overlap the next files' decoding; this returns only
    when every original is on disk (or has failed): nothing is reported stored before."""
    storage = WriteOnceStore(root)
    results: list[IntakeResult] = []
    behind: deque[tuple[IntakeResult, Future[bool]]] = deque()
    held = 0
    for source in sources:
        result, writer = _start(source, storage, extra_digests)
        results.append(result)
        if writer is not None:
            behind.append((result, writer))
            held += result.size
        while held > WRITE_BEHIND:  # bound the memory the writer holds on to
            done, writer = behind.popleft()
            _finish(done, writer, storage)
            held -= done.size
    for done, writer in behind:
        _finish(done, writer, storage)
    return results


def _describe(data: bytes, result: IntakeResult, storage: WriteOnceStore) -> None:
    """Type, metadata, thumbnail and perceptual hash. Problems become flags."""
    result.media_type = sniff(data)
    result.kind = kind_of(result.media_type)
    if result.size == 0:
        result.flag("empty", "zero-byte file")
        return
    claimed = extension_conflict(result.source.name, result.media_type)
    if claimed:
        result.flag("extension_mismatch", f"named like {claimed}, content is {result.media_type}")
    if result.media_type not in DECODABLE:
        return
    if result.size > DECODE_LIMIT or len(data) < result.size:  # only its head was kept
        result.flag("not_decoded", "too large to decode at intake")
        return
    try:
        decode_image(data, result, storage)
    except (Image.DecompressionBombWarning, Image.DecompressionBombError) as exc:
        result.flag("decompression_bomb", str(exc))
    except Exception as exc:  # undecodable: still stored and hashed, flagged with the reason
        result.flag("undecodable", f"{type(exc).__name__}: {exc}")


def make_preview(original_path: str) -> tuple[bytes, int, int]:
    """A ~1024 px JPEG preview, made on first view (never during intake)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", Image.DecompressionBombWarning)
        img = Image.open(original_path, formats=PIL_FORMATS)
        if img.width * img.height > MAX_PIXELS:
            raise ValueError("image too large to preview")
        preview = make_reduced(
            img, PREVIEW_SIZE, valid_orientation(img.getexif().get(274)), Image.Resampling.BICUBIC
        )
    return encode_jpeg(preview, 85), preview.width, preview.height
