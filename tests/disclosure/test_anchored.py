"""A package's checkpoint is an ordinary published checkpoint (its files in the checkpoints
folder, its own audit entry), with consistency proofs from the previous published one and
from the checkpoints of earlier packages sent to the same recipient (decision 0031)."""

import json

import pytest

from casefiles import checkpoints
from casefiles.models import AuditCheckpoint, AuditEntry
from casefiles.services import publish_audit_checkpoint
from evidence import services as evidence_services

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
