"""The ``evidence`` storage alias: Django's Storage API over the write-once store.

Django's FileSystemStorage neither fsyncs nor refuses to overwrite across processes, so
originals are written by ``evidence.originals``; this class adds what Django asks of a
storage backend, and refuses what an evidence store must never do.
"""

from __future__ import annotations

import os
from typing import BinaryIO, cast

from django.core.files.base import File
from django.core.files.storage import Storage, storages
from django.utils.deconstruct import deconstructible

from .originals import CHUNK, OriginalStore, WriteOnceStore, derivative_key, original_key

__all__ = [
    "CHUNK",
    "EvidenceStorage",
    "OriginalStore",
    "derivative_key",
    "evidence_storage",
    "original_key",
]


@deconstructible
class EvidenceStorage(WriteOnceStore, Storage):  # type: ignore[misc]  # open: the store's
    """Write-once files under ``location`` (default: ``settings.STORAGE_ROOT``)."""

    def __init__(self, location: str | os.PathLike | None = None) -> None:
        from django.conf import settings

        super().__init__(location or settings.STORAGE_ROOT)

    def for_workers(self) -> WriteOnceStore:
        """The same store without Django, for intake worker processes (picklable)."""
        return WriteOnceStore(self.root)

    # -- Django's Storage API ----------------------------------------------------
    def _open(self, name: str, mode: str = "rb") -> File:
        return File(WriteOnceStore.open(self, name, mode))  # the caller closes it

    def _save(self, name: str, content: BinaryIO) -> str:
        written = self.write_original(iter(lambda: content.read(CHUNK), b""))
        return written.key

    def delete(self, name: str) -> None:
        raise PermissionError("Originals are never deleted by Athar.")

    def path(self, name: str) -> str:
        """Django's local path of a file: for tools and tests that look at the disk; the
        app itself reaches files only through ``open``, ``verify``, ``exists``, ``size``."""
        return str(self._file(name))

    def url(self, name: str | None) -> str:
        raise NotImplementedError("Evidence is served only through access-checked views.")

    def listdir(self, path: str):
        directory = self.root / path
        entries = list(directory.iterdir()) if directory.exists() else []
        return (
            [e.name for e in entries if e.is_dir()],
            [e.name for e in entries if e.is_file()],
        )


def evidence_storage() -> EvidenceStorage:
    return cast(EvidenceStorage, storages["evidence"])
