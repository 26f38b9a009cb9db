"""Content-addressed, write-once files: how originals and derivatives are written.

Originals go into a temp file on the same filesystem while hashing, are fsynced, then
published with ``os.link`` (which fails rather than overwrite), then the directory is
fsynced. Nothing here overwrites or deletes an original.

No Django here: intake worker processes import this module alone. ``evidence.storage``
puts Django's Storage API on top of it.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import mmap
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Protocol

CHUNK = 1 << 20


def original_key(sha256: str) -> str:
    return f"sha256/{sha256[:2]}/{sha256[2:4]}/{sha256}"


def derivative_key(sha256: str, kind: str, ext: str) -> str:
    # One level of fan-out: 256 directories made once, not a new one per thumbnail (a
    # directory costs the filesystem more than the few kilobytes of a thumbnail).
    return f"derivatives/{sha256[:2]}/{sha256}.{kind}.{ext}"


@dataclass
class Written:
    sha256: str
    size: int
    key: str
    created: bool  # False: these bytes were already in the store
    head: bytes  # the content if small enough to decode in memory, else its first bytes
    md5: str = ""
    sha1: str = ""


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


# -- writing past the page cache --------------------------------------------------------
# A drive's worth of originals written through the page cache would push out everything
# useful there, and copying each file into it costs more CPU than the write itself. Where
# the filesystem allows, an original already in memory goes straight to the disk
# (O_DIRECT) from an aligned buffer; elsewhere (tmpfs, some network filesystems), as usual.
_ALIGN = 4096  # a multiple of every logical block size O_DIRECT may ask for
_KEEP_BUFFER = 32 << 20  # a buffer up to this size is kept for the thread's next file
_buffers = threading.local()


def _aligned_buffer(size: int) -> mmap.mmap:
    """Page-aligned memory of at least ``size`` bytes (anonymous mmap is page-aligned)."""
    buf = getattr(_buffers, "buf", None)
    if buf is not None and len(buf) >= size:
        return buf
    buf = mmap.mmap(-1, max(size, 1 << 20))
    if len(buf) <= _KEEP_BUFFER:
        _buffers.buf = buf
    return buf


def _set_direct(fd: int, on: bool) -> bool:
    try:
        flags = fcntl.fcntl(fd, fcntl.F_GETFL)
        fcntl.fcntl(fd, fcntl.F_SETFL, flags | os.O_DIRECT if on else flags & ~os.O_DIRECT)
    except (OSError, AttributeError):  # not supported here: the caller writes as usual
        return False
    return True


def _write_durably(fd: int, data: bytes) -> None:
    """Write ``data`` into the empty file ``fd`` and fsync it: on return it is on disk.

    The whole 4 KiB blocks go straight to the disk, the last partial one (if any) through
    the page cache. Padding that block for a direct write and truncating the padding
    afterwards would make the filesystem read it back from the disk to zero its tail."""
    size = len(data)
    aligned = size - size % _ALIGN
    done = 0
    if aligned and _set_direct(fd, True):
        buf = _aligned_buffer(aligned)
        try:
            with memoryview(data) as source, memoryview(buf) as view:
                view[:aligned] = source[:aligned]
                while done < aligned:
                    done += os.pwrite(fd, view[done:aligned], done)
        except OSError:  # refused after all (alignment, filesystem): write it as usual
            os.ftruncate(fd, 0)
            done = 0
        finally:
            if not _set_direct(fd, False):
                raise OSError("could not leave O_DIRECT mode")
    with memoryview(data) as view:
        while done < size:
            done += os.pwrite(fd, view[done:], done)
    os.fsync(fd)


class OriginalStore(Protocol):
    """What the rest of Athar may ask of the store of originals: nothing knows a path.

    Originals are content-addressed by SHA-256 and written once; derivatives (remade
    from their original at will) may be replaced. A filesystem store (``WriteOnceStore``)
    implements it today; an object-storage backend implements the same methods.
    """

    def put_if_absent(self, data: bytes, sha256: str) -> bool: ...
    def write_original(
        self, chunks: Iterable[bytes], keep_up_to: int = 0, extra_digests: tuple[str, ...] = ()
    ) -> Written: ...
    def open(self, key: str, mode: str = "rb") -> BinaryIO: ...
    def verify(self, key: str, sha256: str) -> bool: ...
    def exists(self, key: str) -> bool: ...
    def size(self, key: str) -> int: ...
    def write_derivative(self, key: str, data: bytes) -> None: ...
    def free_space(self) -> int: ...
    def scratch_dir(self, name: str) -> Path: ...


class WriteOnceStore:
    """Write-once files under ``root``: the filesystem ``OriginalStore``."""

    def __init__(self, root: str | os.PathLike) -> None:
        self.root = Path(root)
        self._tmp_ready = False

    # -- writing -----------------------------------------------------------------
    def _tmp_dir(self) -> Path:
        tmp = self.root / "tmp"
        if not self._tmp_ready:  # made once per store, not once per file
            tmp.mkdir(parents=True, exist_ok=True)
            self._tmp_ready = True
        return tmp

    def _new_temp(self) -> tuple[int, Path]:
        """A temp file on the store's filesystem, already read-only to everyone (the mode
        is then made durable by the same fsync as the content)."""
        prefix = f"in-{os.getpid()}-"
        try:
            fd, name = tempfile.mkstemp(dir=self._tmp_dir(), prefix=prefix)
        except FileNotFoundError:  # the temp directory went since: make it again
            self._tmp_ready = False
            fd, name = tempfile.mkstemp(dir=self._tmp_dir(), prefix=prefix)
        try:
            os.fchmod(fd, 0o444)
        except BaseException:
            os.close(fd)
            Path(name).unlink(missing_ok=True)
            raise
        return fd, Path(name)

    def _publish(self, tmp: Path, key: str) -> bool:
        """Link the fsynced temp file under its key, never over an existing file, and make
        the new name durable: the directory holding it, and the parent of every directory
        made here for it (only those: each fsync is a flush of the disk's cache)."""
        final = self.root / key
        made: list[Path] = []
        try:
            try:
                os.link(tmp, final)
            except FileNotFoundError:  # its directory is new: make it, top down
                # A directory seen missing here may be made by a concurrent writer first:
                # its parent is fsynced here all the same, as this call may return first.
                made.append(final.parent)
                while not made[-1].parent.exists():
                    made.append(made[-1].parent)
                for directory in reversed(made):
                    with contextlib.suppress(FileExistsError):
                        directory.mkdir()
                os.link(tmp, final)
        except FileExistsError:
            return False
        finally:
            tmp.unlink()
        _fsync_dir(final.parent)
        for directory in made:
            _fsync_dir(directory.parent)
        return True

    def write_original(
        self,
        chunks: Iterable[bytes],
        keep_up_to: int = 0,
        extra_digests: tuple[str, ...] = (),
    ) -> Written:
        """Store a stream of bytes read once: hash, fsync, publish without overwriting.

        Up to ``keep_up_to`` bytes of the content are kept in memory for decoding.
        """
        digest = hashlib.sha256()
        extras = {name: hashlib.new(name) for name in extra_digests}
        kept: list[bytes] = []
        kept_size = size = 0
        fd, tmp = self._new_temp()
        try:
            with os.fdopen(fd, "wb") as out:
                for chunk in chunks:
                    digest.update(chunk)
                    for h in extras.values():
                        h.update(chunk)
                    out.write(chunk)
                    size += len(chunk)
                    if kept_size < max(keep_up_to, 16):
                        kept.append(chunk)
                        kept_size += len(chunk)
                out.flush()
                os.fsync(out.fileno())
            sha = digest.hexdigest()
            key = original_key(sha)
            created = self._publish(tmp, key)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        head = b"".join(kept)
        if size > keep_up_to:
            head = head[:4096]
        return Written(
            sha,
            size,
            key,
            created,
            head,
            md5=extras["md5"].hexdigest() if "md5" in extras else "",
            sha1=extras["sha1"].hexdigest() if "sha1" in extras else "",
        )

    def write_original_bytes(self, data: bytes, sha256: str) -> bool:
        """Store content already in memory whose SHA-256 the caller computed from it.

        Returns False when these bytes were already in the store.
        """
        fd, tmp = self._new_temp()
        try:
            try:
                _write_durably(fd, data)
            finally:
                os.close(fd)
            return self._publish(tmp, original_key(sha256))
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise

    def put_if_absent(self, data: bytes, sha256: str) -> bool:
        """Store ``data`` under its SHA-256 unless already there; False if it was."""
        return self.write_original_bytes(data, sha256)

    def _file(self, key: str) -> Path:
        path = (self.root / key).resolve()
        if not path.is_relative_to(self.root.resolve()):
            raise ValueError("A storage key must stay inside the store.")
        return path

    def open(self, key: str, mode: str = "rb") -> BinaryIO:
        """The stored file, to read (the caller closes it); OSError if it cannot be."""
        if mode not in ("rb", "r"):
            raise PermissionError("Evidence storage is read-only once written.")
        return self._file(key).open("rb")

    def exists(self, key: str) -> bool:
        return self._file(key).exists()

    def size(self, key: str) -> int:
        return self._file(key).stat().st_size

    def verify(self, key: str, sha256: str) -> bool:
        """Re-hash a stored original against its SHA-256 (OSError if unreadable)."""
        digest = hashlib.sha256()
        with self.open(key) as fh:
            while chunk := fh.read(CHUNK):
                digest.update(chunk)
        return digest.hexdigest() == sha256

    verify_existing = verify  # found already there at intake

    def free_space(self) -> int:
        """Bytes the store can still take."""
        self.root.mkdir(parents=True, exist_ok=True)  # a new store: made as a write would
        return shutil.disk_usage(self.root).free

    def scratch_dir(self, name: str) -> Path:
        """A local folder for files waiting to be taken in (a browser upload), on the
        store's disk so that storing them is a copy within one filesystem."""
        return self.root / "uploads" / name

    def write_derivative(self, key: str, data: bytes) -> None:
        """Derivatives are remade from their original at will: written atomically (a
        reader never sees half a thumbnail), not fsynced, and replaced if present."""
        final = self.root / key
        tmp = final.with_name(f"{final.name}.{os.getpid()}.tmp")
        try:
            try:
                tmp.write_bytes(data)
            except FileNotFoundError:
                final.parent.mkdir(parents=True, exist_ok=True)
                tmp.write_bytes(data)
            tmp.replace(final)
        except OSError:  # a full disk, say: never leave half a derivative behind
            tmp.unlink(missing_ok=True)
            raise

    def clean_stale_temp_files(self, older_than: float = 3600) -> int:
        """Remove temp files left by killed writers (never a published file)."""
        removed = 0
        cutoff = time.time() - older_than
        for tmp in self._tmp_dir().iterdir():
            try:
                stale = tmp.stat().st_mtime < cutoff
            except FileNotFoundError:  # its writer, alive, published or removed it
                continue
            if stale:
                tmp.unlink(missing_ok=True)
                removed += 1
        return removed
