"""Is a recording whole? A file cut short (a copy interrupted, a phone that died while
recording, a partial download) is told from the sizes its container declares, read from
a few headers (never the file itself): ISO base media (MP4, MOV, 3GP, M4A) by its
top-level boxes, Matroska and WebM by their Segment, RIFF (WAV, AVI) by its first chunk.

Each check reads at most a few kilobytes, whatever the file's size."""

from __future__ import annotations

from typing import BinaryIO

_BOXES_AT_MOST = 10_000  # top-level boxes walked (a real file has a handful)
# Top-level box types of an ISO base media file (ISO/IEC 14496-12, QuickTime).
_TOP_BOXES = {
    b"ftyp", b"moov", b"mdat", b"free", b"skip", b"wide", b"udta", b"uuid", b"meta",
    b"pnot", b"PICT", b"moof", b"mfra", b"sidx", b"styp", b"pdin", b"prft", b"emsg",
    b"junk", b"beam",
}  # fmt: skip


def _read_at(fh: BinaryIO, offset: int, n: int) -> bytes:
    fh.seek(offset)
    return fh.read(n)


def cut_short(fh: BinaryIO, size: int) -> str | None:
    """Why the file in ``fh`` (``size`` bytes) is shorter than its container says it is,
    or None when its declared sizes fit (or its kind of file declares none)."""
    head = _read_at(fh, 0, 16)
    if head[4:8] in _TOP_BOXES:
        return _iso_boxes(fh, size)
    if head[:4] == b"\x1aE\xdf\xa3":
        return _matroska(fh, size)
    if head[:4] == b"RIFF":
        declared = int.from_bytes(head[4:8], "little")
        if declared not in (0, 0xFFFFFFFF) and 8 + declared > size:  # 0, ~0: left unset
            return f"its RIFF header declares {8 + declared:,} bytes, the file has {size:,}"
    return None


def _iso_boxes(fh: BinaryIO, size: int) -> str | None:
    offset = 0
    seen: list[str] = []
    for _ in range(_BOXES_AT_MOST):
        if offset >= size:
            break
        header = _read_at(fh, offset, 16)
        if len(header) < 8:
            return f"a box header is cut at byte {offset:,}"
        box_size, box_type = int.from_bytes(header[:4], "big"), header[4:8]
        name = box_type.decode("latin-1")
        seen.append(name)
        if box_size == 1:  # a 64-bit size follows
            if len(header) < 16:
                return f"the '{name}' box's size is cut at byte {offset:,}"
            box_size = int.from_bytes(header[8:16], "big")
        elif box_size == 0:  # runs to the end of the file
            break
        if box_size < 8:
            return None  # not a box after all: nothing declared to hold it to
        if offset + box_size > size:
            return (
                f"its '{name}' box at byte {offset:,} declares {box_size:,} bytes, "
                f"only {size - offset:,} are there"
            )
        offset += box_size
    return None


def _vint(fh: BinaryIO) -> tuple[int, int] | None:
    """An EBML variable-length integer: (value, its length); None at the file's end."""
    first = fh.read(1)
    if not first:
        return None
    length = 9 - first[0].bit_length() if first[0] else 9
    if length > 8:
        return None
    rest = fh.read(length - 1)
    if len(rest) < length - 1:
        return None
    value = first[0] & (0xFF >> length)
    for b in rest:
        value = (value << 8) | b
    return value, length


def _matroska(fh: BinaryIO, size: int) -> str | None:
    fh.seek(4)
    header = _vint(fh)  # the EBML header's size
    if header is None:
        return "its EBML header is cut"
    offset = 4 + header[1] + header[0]
    segment_id = _read_at(fh, offset, 4)
    if segment_id != b"\x18\x53\x80\x67":
        return None if len(segment_id) == 4 else "it ends before its Segment"
    declared = _vint(fh)
    if declared is None:
        return "its Segment's size is cut"
    value, length = declared
    start = offset + 4 + length
    if value == (1 << (7 * length)) - 1:  # all ones: "size unknown" (a live writer's)
        return None
    if start + value > size:
        return f"its Segment declares {start + value:,} bytes, the file has {size:,}"
    return None
