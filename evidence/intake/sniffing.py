"""What a file is: its media type told from its bytes, and whether its name says otherwise."""

from __future__ import annotations

import mimetypes
from pathlib import PurePosixPath

SNIFF_BYTES = 4096  # what the type is told from

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
