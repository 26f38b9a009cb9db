"""Writing a BagIt bag (RFC 8493) of our own, deterministically, and its tar file.

Payload files are streamed in (1 MiB at a time: a 1 GB video never sits in memory), hashed
with SHA-256 and SHA-512 as they are written; tag files are written from bytes. ``finish``
writes the manifests, bag-info.txt and the tag manifests; ``sign`` the detached Ed25519
signature over tagmanifest-sha256.txt. ``write_tar`` packs the bag with fixed names,
order, owners, modes and times, so the same bag gives the same bytes.
"""

from __future__ import annotations

import hashlib
import os
import tarfile
import tempfile
from collections.abc import Iterable
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
SIGNATURE = "signature/tagmanifest-sha256.txt.sig"


class ChangedOnTheWay(Exception):
    """A payload file's bytes did not hash to what the store recorded."""


class BagWriter:
    def __init__(self, root: Path) -> None:
        if root.exists() and any(root.iterdir()):
            raise FileExistsError(f"{root} is not empty: a bag is written into a new folder")
        self.root = root
        self.payload: dict[str, dict[str, str]] = {}  # path -> {algorithm: hex}
        self.sizes: dict[str, int] = {}
        root.mkdir(parents=True, exist_ok=True)

    def _path(self, name: str) -> Path:
        path = self.root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        return path

    def add_payload(self, name: str, source: BinaryIO, expect_sha256: str = "") -> dict[str, str]:
        """Stream ``source`` into ``data/<name>``; refuse it (loudly) when its SHA-256 is
        not ``expect_sha256``. Returns its digests."""
        name = f"data/{name}"
        digests = {a: hashlib.new(a) for a in ALGORITHMS}
        size = 0
        with self._path(name).open("xb") as out:
            while chunk := source.read(CHUNK):
                for h in digests.values():
                    h.update(chunk)
                out.write(chunk)
                size += len(chunk)
        found = {a: h.hexdigest() for a, h in digests.items()}
        if expect_sha256 and found["sha256"] != expect_sha256:
            raise ChangedOnTheWay(f"{name}: sha256 {found['sha256']}, recorded {expect_sha256}")
        self.payload[name], self.sizes[name] = found, size
        return found

    def add_payload_bytes(self, name: str, data: bytes) -> dict[str, str]:
        import io

        return self.add_payload(name, io.BytesIO(data))

    def add_tag(self, name: str, data: bytes) -> None:
        self._path(name).write_bytes(data)

    def finish(self, info: Iterable[tuple[str, str]]) -> bytes:
        """Manifests, bagit.txt, bag-info.txt (with Payload-Oxum) and the tag manifests
        over every tag file but the signature's. Returns tagmanifest-sha256.txt."""
        for algorithm in ALGORITHMS:
            lines = [f"{d[algorithm]}  {n}\n" for n, d in sorted(self.payload.items())]
            self.add_tag(f"manifest-{algorithm}.txt", "".join(lines).encode())
        self.add_tag("bagit.txt", DECLARATION)
        oxum = f"{sum(self.sizes.values())}.{len(self.sizes)}"
        lines = [f"{k}: {_one_line(v)}\n" for k, v in [*info, ("Payload-Oxum", oxum)]]
        self.add_tag("bag-info.txt", "".join(lines).encode())
        tags = sorted(
            p.relative_to(self.root).as_posix()
            for p in self.root.rglob("*")
            if p.is_file()
            and not p.relative_to(self.root).as_posix().startswith(("data/", "signature/"))
            and not p.name.startswith("tagmanifest-")
        )
        digests = {name: _file_digests(self.root / name) for name in tags}
        for algorithm in ALGORITHMS:
            lines = [f"{digests[n][algorithm]}  {n}\n" for n in tags]
            self.add_tag(f"tagmanifest-{algorithm}.txt", "".join(lines).encode())
        return (self.root / "tagmanifest-sha256.txt").read_bytes()

    def add_public_key(self, key: Ed25519PrivateKey) -> None:
        """``public-key.pem``, a tag file like any other: the signature covers it (the
        anchor is its fingerprint, which the recipient gets from the sender)."""
        self.add_tag(PUBLIC_KEY, public_pem(key.public_key()).encode())

    def sign(self, key: Ed25519PrivateKey, tagmanifest: bytes) -> None:
        """The detached signature, the only file of ``signature/``."""
        self.add_tag(SIGNATURE, key.sign(tagmanifest))


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


def write_tar(bag: Path, top: str, mtime: int, out: BinaryIO) -> tuple[str, int]:
    """The bag as a tar stream under ``top/``: names in sorted order, owner 0:0, modes
    0644 and 0755, every time ``mtime``. Returns the tar's SHA-256 and size."""
    writer = _HashingWriter(out)
    with tarfile.open(fileobj=writer, mode="w|", format=tarfile.USTAR_FORMAT) as tar:  # type: ignore[call-overload]
        for path in [bag, *sorted(bag.rglob("*"), key=lambda p: p.relative_to(bag).as_posix())]:
            relative = path.relative_to(bag).as_posix()
            info = tarfile.TarInfo(top if relative == "." else f"{top}/{relative}")
            info.mtime, info.uid, info.gid, info.uname, info.gname = mtime, 0, 0, "", ""
            if path.is_dir():
                info.type, info.mode = tarfile.DIRTYPE, 0o755
                tar.addfile(info)
                continue
            info.mode, info.size = 0o644, path.stat().st_size
            with path.open("rb") as fh:
                tar.addfile(info, fh)
    return writer.sha256.hexdigest(), writer.size


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


def store_pdf(path: Path, data: bytes) -> None:
    """Keep a report once beside its package (a concurrent first writer wins)."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.stem, suffix=".tmp")
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
    try:
        store_once(Path(tmp), path)
    except FileExistsError:
        pass
