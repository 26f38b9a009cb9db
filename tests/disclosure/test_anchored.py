"""A package's checkpoint is an ordinary published checkpoint (its files in the checkpoints
folder, its own audit entry), with consistency proofs from the previous published one and
from the checkpoints of earlier packages sent to the same recipient (decision 0031)."""

import hashlib
import io
import json
import re
import shutil
import tarfile
from pathlib import Path

import pytest
from django.core.management import call_command
from django.urls import reverse

from casefiles import checkpoints
from casefiles.models import AuditCheckpoint, AuditEntry
from casefiles.services import publish_audit_checkpoint
from disclosure import services
from evidence import services as evidence_services
from tests.evidence.helpers import stored_bytes

from .conftest import BODY
from .test_bag import approved, build

pytestmark = pytest.mark.django_db


def _checkpoint(bag) -> dict:
    return json.loads((bag / "metadata/audit/checkpoint.json").read_text())


def _touch(world) -> None:
    """An entry about an item of the package: a checkpoint before it does not cover it."""
    photo = world.photos[1]
    photo.refresh_from_db()
    evidence_services.update_item(actor=world.cast.investigator, item=photo, tags=["seen"])


def _holds(proof: dict, checkpoint: dict) -> bool:
    return checkpoints.verify_consistency(
        proof["size"],
        checkpoint["size"],
        bytes.fromhex(proof["root"]),
        bytes.fromhex(checkpoint["root"]),
        [bytes.fromhex(p) for p in proof["proof"]],
    )


def test_the_package_s_checkpoint_is_published_with_a_proof_from_the_previous_one(
    world, tmp_path, data_dir
):
    before, _where = publish_audit_checkpoint()
    _touch(world)
    package = approved(world)
    build(package, tmp_path / "bag")
    doc = _checkpoint(tmp_path / "bag")
    row = AuditCheckpoint.objects.get(size=doc["size"])
    assert row.size > before.size
    published = data_dir / "checkpoints" / f"checkpoint-{row.size}"
    assert (published / "checkpoint.txt").read_text() == doc["signed_text"]
    on_file = json.loads((published / "checkpoint.json").read_text())
    assert {k: v for k, v in doc.items() if k in on_file} == on_file
    assert AuditEntry.objects.filter(action="audit.checkpoint", target_id=str(row.pk)).exists()
    previous = doc["consistency_from_previous"]
    assert previous == {"size": before.size, "root": before.root, "proof": previous["proof"]}
    assert _holds(previous, doc)
    assert doc["consistency_proofs"] == [previous]
    assert doc["cosignatures"] == []
    built = AuditEntry.objects.get(action="disclosure.build")
    assert built.details["checkpoint"] == row.size
    assert built.details["consistency_from"] == [before.size]


def test_a_covering_published_checkpoint_is_reused(world, tmp_path, data_dir):
    package = approved(world)
    row, _where = publish_audit_checkpoint()
    build(package, tmp_path / "bag")
    assert _checkpoint(tmp_path / "bag")["size"] == row.size
    assert AuditCheckpoint.objects.count() == 1


def test_a_second_package_to_the_same_recipient_carries_a_proof_from_the_first(world, tmp_path):
    build(approved(world), tmp_path / "one")
    first = _checkpoint(tmp_path / "one")
    between, _where = publish_audit_checkpoint()  # the previous one of the second package
    _touch(world)
    spelled = f"  {BODY.upper().replace(' ', '   ')} "
    second = approved(world, recipient=spelled)
    other = approved(world, recipient="Another body (fictional)")
    build(second, tmp_path / "two")
    doc = _checkpoint(tmp_path / "two")
    sizes = [p["size"] for p in doc["consistency_proofs"]]
    assert sizes == sorted([first["size"], between.size])
    for proof in doc["consistency_proofs"]:
        assert _holds(proof, doc)
    assert doc["consistency_proofs"][0]["root"] == first["root"]
    build(other, tmp_path / "three")
    doc = _checkpoint(tmp_path / "three")
    assert first["size"] not in [p["size"] for p in doc["consistency_proofs"]]


def test_the_report_is_a_signed_tag_file_drawn_from_the_bag(world, tmp_path, client):
    from disclosure import report
    from disclosure.models import Package

    from .test_bag import _fails

    bag = tmp_path / "bag"
    build(approved(world), bag)
    pdf = (bag / "custody-report.pdf").read_bytes()
    assert pdf.startswith(b"%PDF")
    listed = (bag / "tagmanifest-sha256.txt").read_text()
    assert f"{hashlib.sha256(pdf).hexdigest()}  custody-report.pdf\n" in listed
    assert report.render_from_bag(bag) == pdf  # the same bag, the same report
    built = AuditEntry.objects.get(action="disclosure.build")
    assert built.details["report_sha256"] == hashlib.sha256(pdf).hexdigest()
    # The package's page issues the very file the bag holds (audited).
    package = Package.objects.get()
    client.force_login(world.cast.lawyer)
    url = reverse("disclosure:package_report", args=[world.case.reference, package.pk])
    assert b"".join(client.get(url).streaming_content) == pdf
    issued = AuditEntry.objects.get(action="disclosure.report")
    assert issued.details["sha256"] == hashlib.sha256(pdf).hexdigest()
    out = io.StringIO()
    call_command(
        "disclosure",
        "report",
        str(package.pk),
        "--out",
        str(tmp_path / "r.pdf"),
        "--as",
        "lawyer",
        stdout=out,
    )
    assert (tmp_path / "r.pdf").read_bytes() == pdf
    assert AuditEntry.objects.filter(action="disclosure.report").count() == 2
    # One byte of it edited: the signed tag manifest no longer holds.
    edited = tmp_path / "edited"
    shutil.copytree(bag, edited)
    data = bytearray(pdf)
    data[len(data) // 2] ^= 1
    (edited / "custody-report.pdf").write_bytes(bytes(data))
    _fails(edited, "custody-report.pdf: its sha256 differs from tagmanifest-sha256.txt")


class _Counting:
    """The evidence store, counting the bytes read from each stored file."""

    def __init__(self, store, read: dict[str, int], opened: dict[str, int]) -> None:
        self.store, self.read, self.opened = store, read, opened

    def open(self, key):
        self.opened[key] = self.opened.get(key, 0) + 1
        fh, counts = self.store.open(key), self.read

        class Reader:
            def read(self, n=-1):
                chunk = fh.read(n)
                counts[key] = counts.get(key, 0) + len(chunk)
                return chunk

            def __enter__(self):
                return self

            def __exit__(self, *exc):
                fh.close()

        return Reader()

    def __getattr__(self, name):
        return getattr(self.store, name)


@pytest.mark.parametrize("keep", [True, False], ids=["with a folder", "tar only"])
def test_the_build_reads_each_payload_file_once(world, tmp_path, monkeypatch, keep):
    from disclosure.services import building
    from evidence.storage import evidence_storage

    read: dict[str, int] = {}
    opened: dict[str, int] = {}
    store = _Counting(evidence_storage(), read, opened)
    monkeypatch.setattr(building, "evidence_storage", lambda: store)
    opened_again: list[str] = []
    path_open = Path.open

    def watched(self, mode="r", *args, **kwargs):
        if "r" in mode and re.search(r"/(bag|PKG-\d+)/data/", self.as_posix()):  # the payload
            opened_again.append(self.as_posix())
        return path_open(self, mode, *args, **kwargs)

    monkeypatch.setattr(Path, "open", watched)
    package = approved(world)
    if keep:
        build(package, tmp_path / "bag")
    else:
        services.run_build(services.start_build(actor=None, package=package))
    package.refresh_from_db()
    assert package.status == "ready", package.error
    photos = world.photos[:2]  # the two approved in review
    for photo in photos:
        key = photo.original.storage_key
        assert (opened[key], read[key]) == (1, photo.original.size)
    assert set(opened) == {p.original.storage_key for p in photos}
    assert opened_again == []  # neither the self-check nor the tar reads the payload again
    monkeypatch.undo()
    # and what was read once went whole into the stored tar
    with tarfile.open(package.stored_path) as tar:
        names = [m.name for m in tar if m.isfile()]
        sent = tar.extractfile(f"{package.code}/data/originals/{package.code}-0001.jpg").read()
    assert sent == stored_bytes(photos[0])
    assert f"{package.code}/custody-report.pdf" in names
