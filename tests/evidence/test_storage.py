"""The write-once store keeps every original byte for byte, however it writes it."""

import hashlib
import os
import stat
from pathlib import Path

import pytest

from evidence import storage
from evidence.storage import EvidenceStorage, original_key

# Around the 4 KiB alignment of direct writes, and well past it.
SIZES = [0, 1, 4095, 4096, 4097, 8191, 8193, 600_001, 3 * 1024 * 1024 + 7]


def _store(root: Path, data: bytes) -> tuple[bool, Path]:
    sha = hashlib.sha256(data).hexdigest()
    created = EvidenceStorage(root).write_original_bytes(data, sha)
    return created, root / original_key(sha)


@pytest.mark.parametrize("size", SIZES)
def test_an_original_is_stored_byte_for_byte_read_only(tmp_path, size):
    data = os.urandom(size)
    created, path = _store(tmp_path, data)
    assert created and path.read_bytes() == data
    assert stat.S_IMODE(path.stat().st_mode) == 0o444
    assert list((tmp_path / "tmp").iterdir()) == []  # no temp file left behind


@pytest.mark.parametrize("size", [4096, 600_001])
def test_where_the_filesystem_refuses_direct_writes_the_bytes_are_the_same(
    tmp_path, monkeypatch, size
):
    monkeypatch.setattr(storage, "_set_direct", lambda fd, on: not on)
    data = os.urandom(size)
    assert _store(tmp_path, data)[1].read_bytes() == data


def test_a_direct_write_refused_half_way_is_written_again_whole(tmp_path, monkeypatch):
    real_pwrite, calls = os.pwrite, []

    def flaky(fd, data, offset):
        calls.append(offset)
        if len(calls) == 2:  # the first write goes through, the second is refused
            raise OSError(22, "Invalid argument")
        return real_pwrite(fd, data[:8192] if len(calls) == 1 else data, offset)

    monkeypatch.setattr(storage.os, "pwrite", flaky)
    data = os.urandom(600_001)
    assert _store(tmp_path, data)[1].read_bytes() == data
    assert len(calls) > 2


def test_the_same_bytes_twice_are_stored_once_and_never_overwritten(tmp_path):
    data = os.urandom(10_000)
    assert _store(tmp_path, data)[0] is True
    assert _store(tmp_path, data)[0] is False
    assert _store(tmp_path, data)[1].read_bytes() == data
