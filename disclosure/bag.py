"""Writing a BagIt bag (RFC 8493) of our own, deterministically, and its tar file, reading
each payload file once.

The payload is declared first (``declare``: each file's name, SHA-256 and size as the
store recorded them), so that manifest-sha256.txt, bagit.txt and bag-info.txt (with its
Payload-Oxum) are written before a byte is copied, and whatever is drawn from the bag's
tag files (the custody report) can be made while the payload copies. Each payload file is
then streamed from the store once, 1 MiB at a time (a 1 GB video never sits in memory):
hashed with SHA-256 and SHA-512 (the SHA-512 on a second thread, in step), checked against
its declaration, and written straight into the tar (``TarWriter``) and, when the bag is
also wanted as a folder, into ``data/``. Tag files are written into the folder from bytes.
``finish`` writes manifest-sha512.txt and the tag manifests; ``sign`` the detached Ed25519
signature over tagmanifest-sha256.txt; ``TarWriter.add_tags`` then packs the tag files
after the payload. Names, order, owners, modes and times are fixed, so the same bag gives
the same tar bytes.
"""

from __future__ import annotations

import hashlib
import os
import tarfile
from collections.abc import Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import BinaryIO

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from casefiles.checkpoints import public_pem

CHUNK = 1 << 20
ALGORITHMS = ("sha256", "sha512")
DECLARATION = b"BagIt-Version: 1.0\nTag-File-Character-Encoding: UTF-8\n"
PROFILE_ID = "urn:athar:bagit-profile:disclosure:1"
# Where the package puts what the recipient reads and runs (tag files, covered by the tag
# manifests and so by the signature) and the one file outside them, the signature.
PUBLIC_KEY = "public-key.pem"
VERIFY_PY = "verify.py"
VERIFY_TXT = "VERIFY.txt"
REPORT = "custody-report.pdf"
SIGNATURE = "signature/tagmanifest-sha256.txt.sig"


class ChangedOnTheWay(Exception):
    """A payload file's bytes did not hash to what the store recorded."""


class _Reading:
    """Reads ``source`` for the tar (or to its end), hashing what it reads and copying it
    into ``copy`` (the bag's folder) when given: the payload's one read."""

    def __init__(self, source: BinaryIO, copy: BinaryIO | None, pool: ThreadPoolExecutor):
        self.source, self.copy, self.pool, self.size = source, copy, pool, 0
        self.sha256, self.sha512 = hashlib.sha256(), hashlib.sha512()
        self.pending: Future | None = None

    def read(self, n: int = CHUNK) -> bytes:
        chunk = self.source.read(n)
        if self.pending is not None:
            self.pending.result()  # one chunk in flight: the SHA-512 keeps its order
        if chunk:
            self.pending = self.pool.submit(self.sha512.update, chunk)
            self.sha256.update(chunk)
            if self.copy is not None:
                self.copy.write(chunk)
            self.size += len(chunk)
        else:
            self.pending = None
        return chunk

    def digests(self) -> dict[str, str]:
        if self.pending is not None:
            self.pending.result()
            self.pending = None
        return {"sha256": self.sha256.hexdigest(), "sha512": self.sha512.hexdigest()}


class BagWriter:
    """A bag: tag files in the new folder ``root``; the payload into ``tar`` and, with
    ``keep_payload``, into ``root/data`` too."""

    def __init__(
        self, root: Path, tar: TarWriter | None = None, *, keep_payload: bool = True
    ) -> None:
        if root.exists() and any(root.iterdir()):
            raise FileExistsError(f"{root} is not empty: a bag is written into a new folder")
        if tar is None and not keep_payload:
            raise ValueError("the payload goes into the tar, the folder, or both")
        self.root, self.tar, self.keep_payload = root, tar, keep_payload
        self.declared: dict[str, tuple[str, int]] = {}  # path -> (sha256, size)
        self.payload: dict[str, dict[str, str]] = {}  # path -> {algorithm: hex}
        root.mkdir(parents=True, exist_ok=True)
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="sha512")

    def _path(self, name: str) -> Path:
        path = self.root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        return path

    def declare(self, name: str, sha256: str, size: int) -> None:
        """A payload file to come, ``data/<name>``, as the store recorded it."""
        self.declared[f"data/{name}"] = (sha256, size)

    def write_declaration(self, info: Iterable[tuple[str, str]]) -> None:
        """manifest-sha256.txt (from the declared files), bagit.txt and bag-info.txt (with
        Payload-Oxum): all known before the payload is copied, which then must match."""
        lines = [f"{sha256}  {n}\n" for n, (sha256, _size) in sorted(self.declared.items())]
        self.add_tag("manifest-sha256.txt", "".join(lines).encode())
        self.add_tag("bagit.txt", DECLARATION)
        total = sum(size for _sha256, size in self.declared.values())
        oxum = f"{total}.{len(self.declared)}"
        lines = [f"{k}: {_one_line(v)}\n" for k, v in [*info, ("Payload-Oxum", oxum)]]
        self.add_tag("bag-info.txt", "".join(lines).encode())

    def add_payload(self, name: str, source: BinaryIO) -> dict[str, str]:
        """Stream ``source`` into the tar (and ``data/<name>``) once, hashing it; refuse it
        (loudly) when it is not the declared bytes. Returns its digests."""
        name = f"data/{name}"
        expect_sha256, size = self.declared[name]
        copy = self._path(name).open("xb") if self.keep_payload else None
        reading = _Reading(source, copy, self._pool)
        try:
            if self.tar is not None:
                try:
                    self.tar.add_stream(name, reading, size)
                except OSError:
                    if reading.size == size:
                        raise  # not the source: the disk
                    reading.size = -1
            while reading.size >= 0 and reading.read():
                pass  # without a tar; or the file is longer than recorded
            found = reading.digests()
        finally:
            if copy is not None:
                copy.close()
        if reading.size != size:
            raise ChangedOnTheWay(f"{name}: not the {size} bytes recorded")
        if found["sha256"] != expect_sha256:
            raise ChangedOnTheWay(f"{name}: sha256 {found['sha256']}, recorded {expect_sha256}")
        self.payload[name] = found
        return found

    def add_payload_bytes(self, name: str, data: bytes) -> dict[str, str]:
        import io

        return self.add_payload(name, io.BytesIO(data))

    def add_tag(self, name: str, data: bytes) -> None:
        """A tag file, written whole under its name (replaced atomically if written
        again: a reader drawing from the bag meanwhile sees one version or the other)."""
        path = self._path(name)
        tmp = path.with_name(f".{path.name}.tmp")
        tmp.write_bytes(data)
        tmp.replace(path)

    def close(self) -> None:
        self._pool.shutdown()

    def finish(self) -> bytes:
        """manifest-sha512.txt and the tag manifests over every tag file but the
        signature's. Returns tagmanifest-sha256.txt."""
        missing = sorted(self.declared.keys() - self.payload.keys())
        if missing:
            raise ChangedOnTheWay(f"{missing[0]}: declared but never copied")
        lines = [f"{d['sha512']}  {n}\n" for n, d in sorted(self.payload.items())]
        self.add_tag("manifest-sha512.txt", "".join(lines).encode())
        tags = self.tag_files()
        digests = {name: _file_digests(self.root / name) for name in tags}
        for algorithm in ALGORITHMS:
            lines = [f"{digests[n][algorithm]}  {n}\n" for n in tags]
            self.add_tag(f"tagmanifest-{algorithm}.txt", "".join(lines).encode())
        return (self.root / "tagmanifest-sha256.txt").read_bytes()

    def tag_files(self) -> list[str]:
        """The tag files written so far, the tag manifests and the signature aside."""
        return sorted(
            p.relative_to(self.root).as_posix()
            for p in self.root.rglob("*")
            if p.is_file()
            and not p.relative_to(self.root).as_posix().startswith(("data/", "signature/"))
            and not p.name.startswith("tagmanifest-")
        )

    def add_public_key(self, key: Ed25519PrivateKey) -> None:
        """``public-key.pem``, a tag file like any other: the signature covers it (the
        anchor is its fingerprint, which the recipient gets from the sender)."""
        self.add_tag(PUBLIC_KEY, public_pem(key.public_key()).encode())

    def sign(self, key: Ed25519PrivateKey, tagmanifest: bytes) -> None:
        """The detached signature, the only file of ``signature/``."""
        self.add_tag(SIGNATURE, key.sign(tagmanifest))

    def verification_digests(self) -> dict[str, dict]:
        """What the build hashed of the payload, for the verifier to take instead of
        reading the files again: ``{path: {sha256, sha512, size}}``."""
        return {n: {**d, "size": self.declared[n][1]} for n, d in self.payload.items()}


def _one_line(value: str) -> str:
    return " ".join(str(value).split())


def _file_digests(path: Path) -> dict[str, str]:
    digests = {a: hashlib.new(a) for a in ALGORITHMS}
    with path.open("rb") as fh:
        while chunk := fh.read(CHUNK):
            for h in digests.values():
                h.update(chunk)
    return {a: h.hexdigest() for a, h in digests.items()}


class _HashingWriter:
    def __init__(self, out: BinaryIO) -> None:
        self.out, self.sha256, self.size = out, hashlib.sha256(), 0

    def write(self, data: bytes) -> int:
        self.sha256.update(data)
        self.size += len(data)
        return self.out.write(data)

    def tell(self) -> int:
        return self.size


class TarWriter:
    """The bag as a tar stream under ``top/``: the payload as it is copied (in the order
    written), then the tag files sorted by name, the signature last; each folder before
    its first file; owner 0:0, modes 0644 and 0755, every time ``mtime``."""

    def __init__(self, out: BinaryIO, top: str, mtime: int) -> None:
        self.out, self.top, self.mtime = _HashingWriter(out), top, mtime
        self.tar = tarfile.TarFile(
            fileobj=self.out,  # type: ignore[arg-type]
            mode="w",
            format=tarfile.USTAR_FORMAT,
            copybufsize=CHUNK,
        )
        self.folders: set[str] = set()
        self._folder("")

    def _info(self, relative: str) -> tarfile.TarInfo:
        info = tarfile.TarInfo(f"{self.top}/{relative}" if relative else self.top)
        info.mtime, info.uid, info.gid, info.uname, info.gname = self.mtime, 0, 0, "", ""
        return info

    def _folder(self, relative: str) -> None:
        if relative in self.folders:
            return
        if relative:
            self._folder(relative.rpartition("/")[0])
        info = self._info(relative)
        info.type, info.mode = tarfile.DIRTYPE, 0o755
        self.tar.addfile(info)
        self.folders.add(relative)

    def add_stream(self, relative: str, source, size: int) -> None:
        self._folder(relative.rpartition("/")[0])
        info = self._info(relative)
        info.mode, info.size = 0o644, size
        self.tar.addfile(info, source)

    def add_tags(self, bag: Path, names: Iterable[str]) -> None:
        for name in names:
            with (bag / name).open("rb") as fh:
                self.add_stream(name, fh, (bag / name).stat().st_size)

    def close(self) -> tuple[str, int]:
        """The end of the archive. Returns the tar's SHA-256 and size."""
        self.tar.close()
        return self.out.sha256.hexdigest(), self.out.size


def store_once(tmp: Path, final: Path) -> None:
    """Publish the fsynced ``tmp`` at ``final``, never over an existing file."""
    with tmp.open("rb") as fh:
        os.fsync(fh.fileno())
    try:
        os.link(tmp, final)
    finally:
        tmp.unlink()
    fd = os.open(final.parent, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def tar_member(path: Path, top: str, name: str) -> bytes | None:
    """The bytes of ``top/name`` in the tar file at ``path``, or None when it holds none
    (the payload's members are skipped over, not read)."""
    wanted = f"{top}/{name}"
    with tarfile.open(path, "r:") as tar:
        for member in tar:
            if member.name == wanted and member.isfile():
                fh = tar.extractfile(member)
                return fh.read() if fh is not None else None
    return None
