"""Per-file intake steps, run in worker processes. No database access here.

Each file is carried through ``STEPS``, in that order, as a ``FileWork``: read once while
hashing and store (the write and its fsync overlap what follows) → sniff the type by its
magic bytes → an empty file is said so → a name that lies about the content is flagged
→ a picture is decoded at a reduced scale for its EXIF, thumbnail and perceptual hash
(``evidence.imaging``), and for a graphic batch its blurred thumbnail made from the
thumbnail in hand. A failing step flags the file; only a failure to store it is an error.
"""

from __future__ import annotations

import hashlib
import os
import re
import zipfile
import zlib
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from PIL import Image

from evidence.originals import CHUNK, WriteOnceStore, original_key

from ..imaging import DECODABLE, decode_image
from ..media.video import describe_recording
from ..names import bidi_flag
from .payload import IntakeResult, SourceFile
from .sniffing import SNIFF_BYTES, extension_conflict, kind_of, sniff

DECODE_LIMIT = 256 << 20  # files up to this size are kept in memory for decoding

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
        method = zipfile.compressor_names.get(  # type: ignore[attr-defined]  # private, stable
            info.compress_type, "unknown"
        )
        raise ValueError(
            f"ZIP member compressed with method {info.compress_type} ({method}), "
            f"which cannot be read here: {exc}"
        ) from exc
    # zipfile checks the CRC-32 after the last byte and raises, and the member would be
    # lost though every byte of it was read and hashed: the check is made here instead
    # (the same work), and a mismatch is flagged, the bytes kept as read.
    member._expected_crc = None  # type: ignore[attr-defined]  # ZipExtFile's own check
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


@dataclass
class FileWork:
    """One file on its way through the steps: what is known of it so far."""

    result: IntakeResult
    storage: WriteOnceStore
    extra: tuple[str, ...] = ()  # digests asked for besides SHA-256 (a custodian's md5)
    data: bytes = b""  # the content, or only its head when too large to decode
    writer: Future[bool] | None = None  # the original's write, while it is under way
    done: bool = False  # a step found nothing more to do with this file
    blurred: bool = False  # a graphic batch: a blurred thumbnail too


def flag_name(work: FileWork) -> None:
    """A name with bidirectional controls could show one thing and be another."""
    if flag := bidi_flag(work.result.source.path):
        work.result.flags.append(flag)


def read_and_store(work: FileWork) -> None:
    work.data, work.writer = _read_and_store(
        work.result.source, work.storage, work.result, work.extra
    )


def sniff_type(work: FileWork) -> None:
    work.result.media_type = sniff(work.data)
    work.result.kind = kind_of(work.result.media_type)


def check_empty(work: FileWork) -> None:
    if work.result.size == 0:
        work.result.flag("empty", "zero-byte file")
        work.done = True


def check_extension(work: FileWork) -> None:
    result = work.result
    if claimed := extension_conflict(result.source.name, result.media_type):
        result.flag("extension_mismatch", f"named like {claimed}, content is {result.media_type}")


def decode_picture(work: FileWork) -> None:
    """EXIF, thumbnail and perceptual hash of a picture small enough to decode."""
    result = work.result
    if result.media_type not in DECODABLE:
        return
    if result.size > DECODE_LIMIT or len(work.data) < result.size:  # only its head was kept
        result.flag("not_decoded", "too large to decode at intake")
        return
    try:
        decode_image(work.data, result, work.storage, blurred=work.blurred)
    except (Image.DecompressionBombWarning, Image.DecompressionBombError) as exc:
        result.flag("decompression_bomb", str(exc))
    except Exception as exc:  # undecodable: still stored and hashed, flagged with the reason
        result.flag("undecodable", f"{type(exc).__name__}: {_without_addresses(exc)}")


_ADDRESS = re.compile(r"<([\w.]+) object at 0x[0-9a-f]+>")


def _without_addresses(exc: Exception) -> str:
    """An error's text without the memory addresses of the objects it names (Pillow's
    "cannot identify image file <_io.BytesIO object at 0x7f…>"): the same file gives the
    same reason, whichever way and whenever it is taken in."""
    return _ADDRESS.sub(r"<\1>", str(exc))


# The steps every file goes through, in this order (a step may end the file's way early).
STEPS: tuple[tuple[str, Callable[[FileWork], None]], ...] = (
    ("flag name", flag_name),
    ("read and store", read_and_store),
    ("sniff type", sniff_type),
    ("check empty", check_empty),
    ("check extension", check_extension),
    ("decode picture", decode_picture),
    ("describe recording", describe_recording),
)


def _start(
    source: SourceFile, storage: WriteOnceStore, extra: tuple[str, ...], blurred: bool
) -> tuple[IntakeResult, Future[bool] | None]:
    """Run the steps over one source; its original may still be being written."""
    result = IntakeResult(source=source, flags=[dict(code=c, reason=r) for c, r in source.flags])
    work = FileWork(result, storage, extra, blurred=blurred)
    try:
        for _name, step in STEPS:
            step(work)
            if work.done:
                break
    except Exception as exc:  # reported with the file's path; the batch goes on
        if work.writer is not None:
            work.writer.exception()  # the write has ended, one way or the other, first
            work.writer = None
        result.error = f"{type(exc).__name__}: {exc}"
    return result, work.writer


def _finish(result: IntakeResult, writer: Future[bool] | None, storage: WriteOnceStore) -> None:
    """Wait until the original is durably stored (or failed to be)."""
    if writer is None:
        return
    try:
        if not writer.result():  # raises what the writer raised
            _check_existing(storage, result)
    except Exception as exc:
        result.error = f"{type(exc).__name__}: {exc}"


def ready() -> bool:
    """Nothing: run once in a worker process started ahead of its work, which has then
    imported the steps (see ``pipeline.workers``)."""
    return True


def process_many(
    sources: list[SourceFile],
    store: WriteOnceStore | str,
    extra_digests: tuple[str, ...] = (),
    blurred: bool = False,
) -> list[IntakeResult]:
    """Run every per-file step for each source; never raises for a bad file.
    ``blurred``: make each picture's blurred thumbnail too (a graphic batch).

    Each original's write and fsync overlap the next files' decoding; this returns only
    when every original is on disk (or has failed): nothing is reported stored before."""
    storage = WriteOnceStore(store) if isinstance(store, str) else store
    results: list[IntakeResult] = []
    behind: deque[tuple[IntakeResult, Future[bool]]] = deque()
    held = 0
    for source in sources:
        result, writer = _start(source, storage, extra_digests, blurred)
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
