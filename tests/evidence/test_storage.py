"""The write-once store keeps every original byte for byte, however and whenever it
writes it."""

import hashlib
import os
import stat
import time
from pathlib import Path

import pytest

from evidence import originals
from evidence.intake import steps
from evidence.intake.payload import SourceFile
from evidence.intake.steps import process_many
from evidence.originals import WriteOnceStore
from evidence.storage import EvidenceStorage, original_key
from tests.evidence.images import jpeg_bytes, write

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
    monkeypatch.setattr(originals, "_set_direct", lambda fd, on: not on)
    data = os.urandom(size)
    assert _store(tmp_path, data)[1].read_bytes() == data


def _takes_direct_writes(directory: Path) -> bool:
    fd = os.open(directory / "probe", os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        return originals._set_direct(fd, True)  # the store's own probe
    finally:
        os.close(fd)


def _disk_bytes_read() -> int:
    with Path("/proc/self/io").open() as fh:
        return next(int(line.split()[1]) for line in fh if line.startswith("read_bytes:"))


def test_storing_an_original_reads_nothing_back_from_the_disk(tmp_path):
    """Its last partial block is not padded, written direct and truncated: that made the
    filesystem read the block back from the disk for every original."""
    if not Path("/proc/self/io").exists() or not _takes_direct_writes(tmp_path):
        pytest.skip("needs direct writes and /proc/self/io")
    _store(tmp_path, os.urandom(5000))  # the first opens what every store call needs
    # The kernel here pages out file cache left idle for a minute, and a page of the
    # interpreter or a library faulted back in counts as a read too: a run with no read
    # at all, out of three, shows the store reads nothing (reading back each original's
    # last block would read in every run).
    reads = []
    for attempt in range(3):
        datas = [os.urandom(600_001 + 8 * attempt + n) for n in range(8)]
        before = _disk_bytes_read()
        paths = [_store(tmp_path, data)[1] for data in datas]
        reads.append(_disk_bytes_read() - before)
        assert [path.read_bytes() for path in paths] == datas
        if reads[-1] == 0:
            break
    assert 0 in reads, reads


def test_a_direct_write_refused_half_way_is_written_again_whole(tmp_path, monkeypatch):
    real_pwrite, calls = os.pwrite, []

    def flaky(fd, data, offset):
        calls.append(offset)
        if len(calls) == 2:  # the first write goes through, the second is refused
            raise OSError(22, "Invalid argument")
        return real_pwrite(fd, data[:8192] if len(calls) == 1 else data, offset)

    monkeypatch.setattr(originals.os, "pwrite", flaky)
    data = os.urandom(600_001)
    assert _store(tmp_path, data)[1].read_bytes() == data
    assert len(calls) > 2


def test_the_same_bytes_twice_are_stored_once_and_never_overwritten(tmp_path):
    data = os.urandom(10_000)
    assert _store(tmp_path, data)[0] is True
    assert _store(tmp_path, data)[0] is False
    assert _store(tmp_path, data)[1].read_bytes() == data


def _sources(tmp_path: Path, n: int) -> tuple[list[SourceFile], list[bytes]]:
    datas = [jpeg_bytes(i) for i in range(n)]
    for i, data in enumerate(datas):
        write(tmp_path / "m" / f"{i}.jpg", data)
    return [
        SourceFile(path=f"{i}.jpg", fs_path=str(tmp_path / "m" / f"{i}.jpg")) for i in range(n)
    ], datas


def test_results_come_back_only_once_every_original_is_on_disk(tmp_path, monkeypatch):
    real = WriteOnceStore.write_original_bytes

    def slow(self, data, sha):
        time.sleep(0.2)  # a disk far slower than the decoding
        return real(self, data, sha)

    monkeypatch.setattr(WriteOnceStore, "write_original_bytes", slow)
    sources, datas = _sources(tmp_path, 4)
    results = process_many(sources, str(tmp_path / "store"))
    for result, data in zip(results, datas, strict=True):
        assert result.stored, result.error
        assert (tmp_path / "store" / result.storage_key).read_bytes() == data


def test_a_failed_write_behind_is_reported_for_its_own_file(tmp_path, monkeypatch):
    sources, datas = _sources(tmp_path, 3)
    refused = hashlib.sha256(datas[1]).hexdigest()
    real = WriteOnceStore.write_original_bytes

    def full_disk(self, data, sha):
        if sha == refused:
            raise OSError(28, "No space left on device")
        return real(self, data, sha)

    monkeypatch.setattr(WriteOnceStore, "write_original_bytes", full_disk)
    monkeypatch.setattr(steps, "WRITE_BEHIND", 1)  # also: wait for each write at once
    results = process_many(sources, str(tmp_path / "store"))
    assert [r.stored for r in results] == [True, False, True]
    assert "No space left on device" in results[1].error
    assert not (tmp_path / "store" / original_key(refused)).exists()


def _record_syncs(monkeypatch, root: Path) -> list[tuple[str, object]]:
    """What was fsynced, in order: ("file", its mode then) or ("dir", path in the store)."""
    events: list[tuple[str, object]] = []
    real_fsync, real_dir = os.fsync, originals._fsync_dir

    def fsync(fd):
        mode = os.fstat(fd).st_mode
        if not stat.S_ISDIR(mode):  # directories are recorded by _fsync_dir
            events.append(("file", stat.S_IMODE(mode)))
        return real_fsync(fd)

    def fsync_dir(path):
        events.append(("dir", Path(path).relative_to(root).as_posix()))
        return real_dir(path)

    monkeypatch.setattr(originals.os, "fsync", fsync)
    monkeypatch.setattr(originals, "_fsync_dir", fsync_dir)
    return events


@pytest.mark.parametrize("streamed", [False, True])
def test_a_new_original_its_name_and_each_new_directory_are_made_durable(
    tmp_path, monkeypatch, streamed
):
    store = EvidenceStorage(tmp_path)
    data = os.urandom(10_000)
    sha = hashlib.sha256(data).hexdigest()
    events = _record_syncs(monkeypatch, tmp_path)
    if streamed:
        store.write_original(iter([data[:4000], data[4000:]]))
    else:
        store.write_original_bytes(data, sha)
    leaf = f"sha256/{sha[:2]}/{sha[2:4]}"
    # Read-only before the content's fsync, so the mode is as durable as the bytes; then
    # the name, then the entries of the three directories made for it.
    assert events == [
        ("file", 0o444),
        ("dir", leaf),
        ("dir", f"sha256/{sha[:2]}"),
        ("dir", "sha256"),
        ("dir", "."),
    ]


def test_a_new_directory_under_one_already_there_syncs_that_one_and_no_higher(
    tmp_path, monkeypatch
):
    store = EvidenceStorage(tmp_path)
    first = os.urandom(5000)
    sha = hashlib.sha256(first).hexdigest()
    store.write_original_bytes(first, sha)
    # Another original whose hash shares the first two levels with the first one's.
    while True:
        other = os.urandom(5000)
        other_sha = hashlib.sha256(other).hexdigest()
        if other_sha[:2] == sha[:2] and other_sha[2:4] != sha[2:4]:
            break
    events = _record_syncs(monkeypatch, tmp_path)
    store.write_original_bytes(other, other_sha)
    leaf = f"sha256/{sha[:2]}/{other_sha[2:4]}"
    assert events == [("file", 0o444), ("dir", leaf), ("dir", f"sha256/{sha[:2]}")]
    events.clear()
    assert store.write_original_bytes(other, other_sha) is False  # already stored
    assert ("dir", leaf) not in events  # nothing new was named
    assert (tmp_path / original_key(other_sha)).read_bytes() == other


def test_a_temp_directory_removed_while_the_store_is_open_is_made_again(tmp_path):
    store = EvidenceStorage(tmp_path)
    assert store.write_original_bytes(b"first", hashlib.sha256(b"first").hexdigest())
    (tmp_path / "tmp").rmdir()  # after this store has made it once
    data = os.urandom(5000)
    assert store.write_original_bytes(data, hashlib.sha256(data).hexdigest())


def test_originals_are_reached_through_the_store_interface(tmp_path):
    store = WriteOnceStore(tmp_path / "store")
    data = jpeg_bytes(3)
    sha = hashlib.sha256(data).hexdigest()
    key = original_key(sha)
    assert not store.exists(key)
    assert store.put_if_absent(data, sha) is True
    assert store.put_if_absent(data, sha) is False  # already there: nothing overwritten
    assert store.exists(key) and store.size(key) == len(data)
    with store.open(key) as fh:
        assert fh.read() == data
    assert store.verify(key, sha) and not store.verify(key, "0" * 64)
    with pytest.raises(PermissionError):
        store.open(key, "wb")
    with pytest.raises(ValueError, match="inside the store"):
        store.open("../outside")


def test_nothing_outside_the_store_knows_a_path_in_it():
    """Only the store's modules turn a key into a path: an object-storage backend then
    plugs in behind the same methods."""
    root = Path(__file__).resolve().parents[2] / "evidence"
    store_modules = {root / "storage.py", root / "originals.py"}
    knowing = [
        f"{path.relative_to(root)}:{n}"
        for path in sorted(root.rglob("*.py"))
        if path not in store_modules
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if ".path(" in line or "STORAGE_ROOT" in line or "storage().root" in line
    ]
    assert knowing == []
