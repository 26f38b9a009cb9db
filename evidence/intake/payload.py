"""The typed payload that flows through the intake steps (picklable: crosses processes)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class SourceFile:
    """One file to take in, and how to read it. ``path`` is as recorded on the medium."""

    path: str
    occurrence: int = 0  # the same path seen again (duplicate names in a ZIP)
    fs_path: str | None = None  # a file on disk (folder intake, staged upload)
    zip_path: str | None = None  # or a member of this ZIP
    zip_member: str | None = None
    zip_index: int | None = None
    declared_size: int | None = None
    flags: tuple[tuple[str, str], ...] = ()

    @property
    def key(self) -> str:
        """Identifies this source within its batch, so a re-run skips what is done."""
        return hashlib.sha256(f"{self.path}\x00{self.occurrence}".encode()).hexdigest()

    @property
    def name(self) -> str:
        # In a ZIP a backslash separates folders too (Windows tools write it); on a disk
        # it is part of a name, e.g. the \xd5 escapes of a name that is not UTF-8.
        path = self.path.replace("\\", "/") if self.zip_path is not None else self.path
        return path.rstrip("/").rsplit("/", 1)[-1] or self.path


@dataclass
class Thumbnail:
    key: str
    width: int
    height: int
    size: int
    parameters: dict[str, Any]


@dataclass
class IntakeResult:
    source: SourceFile
    sha256: str = ""
    size: int = 0
    storage_key: str = ""
    md5: str = ""
    sha1: str = ""
    media_type: str = "application/octet-stream"
    kind: str = "digital"
    metadata: dict[str, Any] = field(default_factory=dict)
    camera_make: str = ""
    camera_model: str = ""
    taken_at: str = ""
    gps: tuple[float, float] | None = None
    orientation: int | None = None
    width: int | None = None
    height: int | None = None
    thumbnail: Thumbnail | None = None
    blurred: Thumbnail | None = None  # of a graphic batch's picture
    phash: int | None = None
    flags: list[dict[str, str]] = field(default_factory=list)
    error: str = ""  # set when the file could not be stored at all
    # The bytes were already in the store: what re-hashing the stored copy found
    # ("match" or "mismatch"); empty when this intake wrote them.
    existing: str = ""

    def flag(self, code: str, reason: str) -> None:
        self.flags.append({"code": code, "reason": reason})

    @property
    def stored(self) -> bool:
        return not self.error
