"""Turn what arrives (a folder tree, a ZIP, staged uploads) into ``SourceFile`` specs.

A ZIP is never extracted: each member is streamed into the store by the workers, and
its name is kept as metadata only, so ``../`` or absolute names cannot write anywhere.
Limits against ZIP bombs are checked on the declared sizes here and on the bytes
actually read while streaming.

Names are recorded as text a database can hold and a person can read; where the bytes
on the medium were not that text (not UTF-8 on disk, an unknown ZIP encoding), the item
is flagged and the reason keeps the raw bytes in hex, so nothing of the name is lost.
"""

from __future__ import annotations

import codecs
import hashlib
import os
import re
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
# The whole archive: what it declares, against its own size, from the first byte. Real
# archives expand little (photos, video, office files about 1:1; text a few times); many
# small members of a bomb each stay under the per-member floor, but not under this.
ZIP_MAX_WHOLE_RATIO = 100
ZIP_WHOLE_FLOOR = 8 << 20  # an archive declaring no more than 8 MiB in all passes
ZIP_UTF8_FLAG = 0x800  # general purpose bit 11: the member's name is UTF-8

Flags = tuple[tuple[str, str], ...]


@dataclass
class Listing:
    files: list[SourceFile] = field(default_factory=list)
    problems: list[dict[str, str]] = field(default_factory=list)  # failed or skipped entries

    def problem(self, path: str, kind: str, reason: str) -> None:
        self.problems.append({"path": path, "kind": kind, "reason": reason})


def displayable(name: str) -> tuple[str, Flags]:
    """A name from the filesystem as text, and a flag if it was not UTF-8 on disk.

    Python hands such bytes over as lone surrogates, which no database column (nor
    ``str.encode``) accepts. They are shown as ``\\xNN`` escapes; the flag's reason
    keeps the exact bytes in hex. The file itself is still opened by its real name.
    """
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        raw = os.fsencode(name)  # the bytes on disk (surrogateescape undone)
        shown = raw.decode("utf-8", "backslashreplace")
        reason = (
            f"name on the medium is not UTF-8, shown with \\x escapes; raw bytes (hex): {raw.hex()}"
        )
        return shown, (("filename_not_utf8", reason),)
    return name, ()


def list_folder(root: Path) -> Listing:
    """Every regular file under ``root``, sorted; symlinks are recorded, never followed."""
    listing = Listing()
    stack = [root]
    found: list[tuple[str, str, Flags]] = []
    while stack:
        directory = stack.pop()
        try:
            entries = list(os.scandir(directory))
        except OSError as exc:
            rel, _ = displayable(str(directory.relative_to(root)))
            listing.problem(rel, "failed", f"unreadable: {displayable(str(exc))[0]}")
            continue
        for entry in entries:
            rel, flags = displayable(Path(entry.path).relative_to(root).as_posix())
            why = "".join(f"; {reason}" for _, reason in flags)  # a skipped name's bytes
            if entry.is_symlink():
                listing.problem(rel, "skipped", f"symbolic link: not followed{why}")
            elif entry.is_dir(follow_symlinks=False):
                stack.append(Path(entry.path))
            elif entry.is_file(follow_symlinks=False):
                found.append((rel, entry.path, flags))
            else:
                listing.problem(rel, "skipped", f"not a regular file{why}")
    # Two names can show alike (bytes escaped as "\\xd5" beside a name really spelt so):
    # the second gets another occurrence, so each keeps its own source key.
    seen: Counter[str] = Counter()
    for rel, full, flags in sorted(found):
        listing.files.append(SourceFile(path=rel, occurrence=seen[rel], fs_path=full, flags=flags))
        seen[rel] += 1
    return listing


def _unsafe_name(name: str) -> str | None:
    p = PurePosixPath(name.replace("\\", "/"))
    if name.startswith(("/", "\\")) or (len(name) > 1 and name[1] == ":"):
        return "absolute path in the archive"
    if ".." in p.parts:
        return "path climbs out of the archive (..)"
    return None


def zip_member_name(info: zipfile.ZipInfo, encoding: str | None = None) -> tuple[str, Flags]:
    """A member's name as its maker meant it, and a flag if that could not be known.

    ``zipfile`` reads a name without the UTF-8 flag as cp437 (the format's old default).
    Windows Explorer writes the OEM code page instead (cp720 for Arabic), and many tools
    write UTF-8 without setting the flag: an Arabic name comes out as mojibake. The raw
    bytes are recovered from the cp437 reading (a lossless one) and decoded again.
    """
    name = info.filename
    if info.flag_bits & ZIP_UTF8_FLAG or name.isascii() or name != info.orig_filename:
        return name, ()  # flagged UTF-8, plain ASCII, or named by a Unicode Path field
    raw = name.encode("cp437")
    try:
        return raw.decode("utf-8"), ()
    except UnicodeDecodeError:
        pass
    if encoding:
        try:
            return raw.decode(encoding), ()
        except UnicodeDecodeError:
            pass
    tried = f"UTF-8 or {encoding}" if encoding else "UTF-8"
    reason = (
        f"name in the ZIP is not {tried} and has no UTF-8 flag: shown as cp437; "
        f"raw bytes (hex): {raw.hex()} (ingest --zip-encoding names the encoding)"
    )
    return name, (("filename_encoding_unknown", reason),)


def list_zip(path: Path, free_space: int | None = None, encoding: str | None = None) -> Listing:
    """The members of a ZIP as sources, with every limit checked before any is read.

    ``free_space``: what the store can still take (its expanded size must fit).
    ``encoding``: of names written without the UTF-8 flag, if known. Members are read by
    index, whatever their names.
    """
    listing = Listing()
    with zipfile.ZipFile(path) as zf:
        infos = zf.infolist()
    if len(infos) > ZIP_MAX_MEMBERS:
        raise ValueError(f"ZIP holds {len(infos):,} members (limit {ZIP_MAX_MEMBERS:,})")
    total = sum(i.file_size for i in infos)
    if total > ZIP_MAX_TOTAL:
        raise ValueError(f"ZIP declares {total:,} bytes uncompressed (limit {ZIP_MAX_TOTAL:,})")
    # Many small, highly compressed members are a bomb too: judge the archive as a whole.
    size = max(path.stat().st_size, 1)
    if total > max(ZIP_WHOLE_FLOOR, ZIP_MAX_WHOLE_RATIO * size):
        raise ValueError(
            f"ZIP of {size:,} bytes declares {total:,} bytes uncompressed: it expands "
            f"{total / size:,.0f}:1 as a whole (limit {ZIP_MAX_WHOLE_RATIO}:1 beyond "
            f"{ZIP_WHOLE_FLOOR:,} bytes)"
        )
    free = free_space
    if free is not None and total > free:
        raise ValueError(f"ZIP declares {total:,} bytes; the store has {free:,} free")
    seen: Counter[str] = Counter()
    for index, info in enumerate(infos):
        if info.is_dir():
            continue
        name, flags = zip_member_name(info, encoding)
        mode = info.external_attr >> 16
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
        if reason := _unsafe_name(name):
            flags = (*flags, ("unsafe_path", reason))
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
                zip_member=info.filename,  # as zipfile names it; read by zip_index
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


def zip_encoding_name(name: str) -> str:
    """The codec's own name of an encoding given for a ZIP's names (``CP720`` and
    ``cp720`` are one), or ValueError: it must keep ASCII as it is (not utf-16, rot13 or
    base64). ``ingest --zip-encoding`` and the upload form check it alike."""
    try:
        codec = codecs.lookup(name)
        known = "a/".encode(codec.name) == b"a/"
    except (LookupError, UnicodeError):
        known = False
    if not known:
        raise ValueError(f"unknown encoding {name!r} for ZIP names.")
    return codec.name


def list_source(
    path: Path, free_space: int | None = None, zip_encoding: str | None = None
) -> Listing:
    if path.is_dir():
        return list_folder(path)
    if is_archive(path.name, path):
        return list_zip(path, free_space, zip_encoding)
    name, flags = displayable(path.name)
    return Listing(files=[SourceFile(path=name, fs_path=str(path), flags=flags)])


def file_sha256(path: Path) -> tuple[str, int]:
    digest, size = hashlib.sha256(), 0
    with path.open("rb") as fh:
        while chunk := fh.read(1 << 20):
            digest.update(chunk)
            size += len(chunk)
    return digest.hexdigest(), size


_HEX = set(b"0123456789abcdef")


def iter_manifest(path: Path) -> Iterator[tuple[str, str, str]]:
    """(algorithm, digest, path) per line of a ``sha256sum``/``sha1sum``/``md5sum`` list
    in a file (``parse_manifest``)."""
    return parse_manifest(path.read_bytes())


def parse_manifest(data: bytes) -> Iterator[tuple[str, str, str]]:
    """(algorithm, digest, path) per line of a ``sha256sum``/``sha1sum``/``md5sum`` list;
    ValueError at the first line that is none. The command line's ``--manifest`` and the
    upload form's custodian's list are read by this one function.

    A name is kept as the bytes the list holds (read as UTF-8 where it is, otherwise with
    its other bytes as surrogates, undone by ``manifest_name_bytes``): a file whose name
    on the medium is not UTF-8 is matched against the list by those bytes."""
    algorithms = {32: "md5", 40: "sha1", 64: "sha256"}
    for raw in data.splitlines():
        line = raw.strip()
        if not line or line.startswith(b"#"):
            continue
        digest, _, name = line.partition(b" ")
        name = name.lstrip(b" ").removeprefix(b"*")
        algorithm = algorithms.get(len(digest))
        if algorithm is None or not name or not set(digest.lower()) <= _HEX:
            shown = raw.decode("utf-8", "backslashreplace")
            raise ValueError(f"not a checksum line: {shown!r}")
        yield (
            algorithm,
            digest.decode("ascii").lower(),
            name.removeprefix(b"./").decode("utf-8", "surrogateescape"),
        )


def manifest_name_bytes(name: str) -> bytes:
    """The bytes of a name read by ``iter_manifest``."""
    return name.encode("utf-8", "surrogateescape")


_RAW_NAME = re.compile(r"raw bytes \(hex\): ([0-9a-f]*)")
_RAW_NAME_FLAGS = ("filename_not_utf8", "filename_encoding_unknown")


def recorded_name_bytes(path: str, flags: list[dict[str, str]]) -> bytes:
    """The bytes of an item's path on the medium: those its name flag keeps, where the
    recorded path shows them escaped; otherwise the recorded path in UTF-8."""
    for flag in flags:
        if flag.get("code") in _RAW_NAME_FLAGS and (m := _RAW_NAME.search(flag["reason"])):
            return bytes.fromhex(m[1])
    return path.encode("utf-8")
