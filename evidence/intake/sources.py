"""Turn what arrives (a folder tree, a ZIP, staged uploads) into ``SourceFile`` specs.

A ZIP is never extracted: each member is streamed into the store by the workers, and
its name is kept as metadata only, so ``../`` or absolute names cannot write anywhere.
Limits against ZIP bombs are checked on the declared sizes here and on the bytes
actually read while streaming.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import zipfile
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from .payload import SourceFile

ZIP_MAX_MEMBERS = 1_000_000
ZIP_MAX_TOTAL = 4 << 40  # 4 TiB declared in all
ZIP_MAX_MEMBER = 64 << 30  # 64 GiB for one member
ZIP_MAX_RATIO = 200  # uncompressed / compressed, for members over ZIP_RATIO_FROM
ZIP_RATIO_FROM = 1 << 20
ZIP_WHOLE_RATIO_FROM = 1 << 30  # the archive-wide ratio counts from 1 GiB declared


@dataclass
class Listing:
    files: list[SourceFile] = field(default_factory=list)
    problems: list[dict[str, str]] = field(default_factory=list)  # failed or skipped entries

    def problem(self, path: str, kind: str, reason: str) -> None:
        self.problems.append({"path": path, "kind": kind, "reason": reason})


def list_folder(root: Path) -> Listing:
    """Every regular file under ``root``, sorted; symlinks are recorded, never followed."""
    listing = Listing()
    stack = [root]
    found: list[tuple[str, str]] = []
    while stack:
        directory = stack.pop()
        try:
            entries = list(os.scandir(directory))
        except OSError as exc:
            listing.problem(str(directory.relative_to(root)), "failed", f"unreadable: {exc}")
            continue
        for entry in entries:
            rel = Path(entry.path).relative_to(root).as_posix()
            if entry.is_symlink():
                listing.problem(rel, "skipped", "symbolic link: not followed")
            elif entry.is_dir(follow_symlinks=False):
                stack.append(Path(entry.path))
            elif entry.is_file(follow_symlinks=False):
                found.append((rel, entry.path))
            else:
                listing.problem(rel, "skipped", "not a regular file")
    listing.files = [SourceFile(path=rel, fs_path=full) for rel, full in sorted(found)]
    return listing


def _unsafe_name(name: str) -> str | None:
    p = PurePosixPath(name.replace("\\", "/"))
    if name.startswith(("/", "\\")) or (len(name) > 1 and name[1] == ":"):
        return "absolute path in the archive"
    if ".." in p.parts:
        return "path climbs out of the archive (..)"
    return None


def list_zip(path: Path, store_root: Path | None = None) -> Listing:
    """The members of a ZIP as sources, with every limit checked before any is read."""
    listing = Listing()
    with zipfile.ZipFile(path) as zf:
        infos = zf.infolist()
    if len(infos) > ZIP_MAX_MEMBERS:
        raise ValueError(f"ZIP holds {len(infos):,} members (limit {ZIP_MAX_MEMBERS:,})")
    total = sum(i.file_size for i in infos)
    if total > ZIP_MAX_TOTAL:
        raise ValueError(f"ZIP declares {total:,} bytes uncompressed (limit {ZIP_MAX_TOTAL:,})")
    # Many small, highly compressed members are a bomb too: judge the archive as a whole.
    whole = total / max(path.stat().st_size, 1)
    if total > ZIP_WHOLE_RATIO_FROM and whole > ZIP_MAX_RATIO:
        raise ValueError(f"ZIP expands {whole:,.0f}:1 as a whole (limit {ZIP_MAX_RATIO}:1)")
    free = shutil.disk_usage(store_root).free if store_root else None
    if free is not None and total > free:
        raise ValueError(f"ZIP declares {total:,} bytes; the store has {free:,} free")
    seen: Counter[str] = Counter()
    for index, info in enumerate(infos):
        name = info.filename
        mode = info.external_attr >> 16
        if info.is_dir():
            continue
        if stat.S_ISLNK(mode):
            listing.problem(name, "skipped", "symbolic link in the archive: not followed")
            continue
        if info.file_size > ZIP_MAX_MEMBER:
            listing.problem(name, "failed", f"declares {info.file_size:,} bytes (limit)")
            continue
        ratio = info.file_size / max(info.compress_size, 1)
        if info.file_size > ZIP_RATIO_FROM and ratio > ZIP_MAX_RATIO:
            listing.problem(
                name, "failed", f"compression ratio {ratio:,.0f}:1 (limit {ZIP_MAX_RATIO}:1)"
            )
            continue
        flags: tuple[tuple[str, str], ...] = ()
        if reason := _unsafe_name(name):
            flags = (("unsafe_path", reason),)
        occurrence = seen[name]
        seen[name] += 1
        if occurrence:
            flags = (
                *flags,
                ("duplicate_name", f"name repeated in the archive (#{occurrence + 1})"),
            )
        listing.files.append(
            SourceFile(
                path=name,
                occurrence=occurrence,
                zip_path=str(path),
                zip_member=name,
                zip_index=index,
                declared_size=info.file_size,
                flags=flags,
            )
        )
    return listing


def is_archive(name: str, path: Path) -> bool:
    """A ZIP handed over as an archive of files. Formats built on ZIP (.docx, .xlsx,
    .odt, .epub, .apk, ...) are documents: they are taken in whole, never opened."""
    return name.lower().endswith(".zip") and zipfile.is_zipfile(path)


def list_source(path: Path, store_root: Path | None = None) -> Listing:
    if path.is_dir():
        return list_folder(path)
    if is_archive(path.name, path):
        return list_zip(path, store_root)
    return Listing(files=[SourceFile(path=path.name, fs_path=str(path))])


def file_sha256(path: Path) -> tuple[str, int]:
    digest, size = hashlib.sha256(), 0
    with path.open("rb") as fh:
        while chunk := fh.read(1 << 20):
            digest.update(chunk)
            size += len(chunk)
    return digest.hexdigest(), size


def iter_manifest(path: Path) -> Iterator[tuple[str, str, str]]:
    """(algorithm, digest, path) per line of a ``sha256sum``/``sha1sum``/``md5sum`` list."""
    algorithms = {32: "md5", 40: "sha1", 64: "sha256"}
    for raw in path.read_text(encoding="utf-8", errors="replace").splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        digest, _, name = line.partition(" ")
        name = name.lstrip(" ").removeprefix("*")
        algorithm = algorithms.get(len(digest))
        if algorithm is None or not name:
            raise ValueError(f"not a checksum line: {raw!r}")
        yield algorithm, digest.lower(), name.removeprefix("./")
