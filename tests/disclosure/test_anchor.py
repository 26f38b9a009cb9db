"""What the verifier checks that a clerk once had to check by eye, each failure named: a
statement's file against testimonies.json and the audit entry that recorded it, items.csv
against items.json, every payload file belonging to one item or statement, each proof's
index and each entry's link to the one before it. And the anchors as options of both
verify.py and manage.py verify_package: the sender's key by fingerprint or PEM, a
checkpoint held from before, each refused input said in words."""

import base64
import csv
import hashlib
import io
import json
import shutil
import subprocess
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from django.core.management import call_command
from django.core.management.base import CommandError

from casefiles import checkpoints
from casefiles.services import publish_audit_checkpoint
from disclosure import verifier

from .signing import CHECKPOINT, resign
from .test_bag import approved, build
from .test_forger import real_fingerprint, run_verify

pytestmark = pytest.mark.django_db


@pytest.fixture
def bag(world, tmp_path):
    build(approved(world), tmp_path / "PKG-0001")
    return tmp_path / "PKG-0001"


def copy(bag: Path, name: str) -> Path:
    out = bag.parent / name
    shutil.copytree(bag, out)
    return out


def fails(bag: Path, *args: str) -> str:
    result = run_verify(bag, *args)
    assert result.returncode == 1, result.stdout
    return result.stdout


def _json(path: Path):
    return json.loads(path.read_text())


def _write(path: Path, doc) -> None:
    path.write_text(json.dumps(doc, ensure_ascii=False, sort_keys=True, indent=2) + "\n")


def test_a_statement_is_checked_against_testimonies_json_and_its_audit_entry(bag):
    statement = next((bag / "data/testimony").iterdir())
    name = f"data/testimony/{statement.name}"
    changed = copy(bag, "changed")
    (changed / name).write_text(statement.read_text().replace("held", "released"))
    resign(changed)
    assert f"FAILED: {name}: not the SHA-256 metadata/testimonies.json records" in fails(changed)
    # testimonies.json says the new hash too: no audit entry recorded that version.
    rows = _json(changed / "metadata/testimonies.json")
    rows[0]["sha256"] = hashlib.sha256((changed / name).read_bytes()).hexdigest()
    _write(changed / "metadata/testimonies.json", rows)
    resign(changed)
    said = fails(changed)
    ref = rows[0]["reference"]
    assert said.startswith(f"FAILED: {name}: no audit entry of the package records its SHA-256")
    assert f"for {ref} version 1" in said


def _csv(bag: Path) -> list[list[str]]:
    return list(csv.reader(io.StringIO((bag / "metadata/items.csv").read_text(), newline="")))


def _write_csv(bag: Path, rows) -> None:
    out = io.StringIO()
    csv.writer(out, lineterminator="\r\n").writerows(rows)
    (bag / "metadata/items.csv").write_bytes(out.getvalue().encode())


def test_items_csv_must_say_what_items_json_says_its_quoting_undone(bag):
    rows = _csv(bag)
    column = rows[0].index("title")
    edited = copy(bag, "edited")
    rows[1][column] = "Another title"
    _write_csv(edited, rows)
    resign(edited)
    said = fails(edited)
    export_id = _json(bag / "metadata/items.json")[0]["export_id"]
    assert f"FAILED: metadata/items.csv row 1 ({export_id}), column title: 'Another title'" in said
    # A title a spreadsheet would run is quoted in the CSV (decision 0015): that matches.
    formula = copy(bag, "formula")
    items = _json(formula / "metadata/items.json")
    items[0]["title"] = "=HYPERLINK(1)"
    _write(formula / "metadata/items.json", items)
    rows[1][column] = "'=HYPERLINK(1)"
    _write_csv(formula, rows)
    resign(formula)
    assert run_verify(formula).returncode == 0
    rows[1][column] = "=HYPERLINK(1)"
    _write_csv(formula, rows)
    resign(formula)
    assert "column title: '=HYPERLINK(1)' where metadata/items.json has \"'=HYPERLINK(1)\"" in (
        fails(formula)
    )
    fewer = copy(bag, "fewer")
    _write_csv(fewer, rows[:-1])
    resign(fewer)
    assert "metadata/items.csv has 1 rows where metadata/items.json has 2 items" in fails(fewer)


def test_every_payload_file_belongs_to_exactly_one_item_or_statement(bag):
    extra = copy(bag, "extra")
    shutil.copy(
        next((extra / "data/originals").iterdir()), extra / "data/originals/PKG-0001-0009.jpg"
    )
    resign(extra)
    assert (
        "FAILED: data/originals/PKG-0001-0009.jpg: the file of no item of "
        "metadata/items.json and no statement of metadata/testimonies.json"
    ) in fails(extra)
    twice = copy(bag, "twice")
    rows = _json(twice / "metadata/testimonies.json")
    _write(twice / "metadata/testimonies.json", [rows[0], rows[0]])
    resign(twice)
    export_id, file = rows[0]["export_id"], rows[0]["file"]
    assert (
        f"FAILED: data/testimony/{file}: the file of {export_id} and of {export_id}; a file "
        "belongs to one"
    ) in fails(twice)


def test_each_proof_s_index_is_its_entry_s_seq_minus_one_and_entries_link_up(bag):
    moved = copy(bag, "moved")
    proofs = _json(moved / "metadata/audit/proofs.json")
    seq = sorted(proofs, key=int)[0]
    proofs[seq]["index"] += 1
    _write(moved / "metadata/audit/proofs.json", proofs)
    resign(moved)
    assert (
        f"FAILED: audit entry #{seq}: its inclusion proof is for index {int(seq)}, not "
        f"{int(seq) - 1}"
    ) in fails(moved)
    relinked = copy(bag, "relinked")
    path = relinked / "metadata/audit/entries.jsonl"
    entries = [json.loads(line) for line in path.read_text().splitlines()]
    seqs = [e["seq"] for e in entries]
    later = next(e for e in entries if e["seq"] - 1 in seqs)
    later["prev_hash"] = "0" * 64
    later["hash"] = verifier.entry_hash(later)
    path.write_text("".join(json.dumps(e, ensure_ascii=False) + "\n" for e in entries))
    resign(relinked)
    said = fails(relinked)
    assert f"FAILED: audit entry #{later['seq']}: its prev_hash is not the hash of entry #" in said


def test_the_sender_s_key_by_fingerprint_in_any_usual_form_or_as_pem(bag, tmp_path):
    real = real_fingerprint()
    printed = subprocess.run(
        ["bash", "-c", "openssl pkey -pubin -in public-key.pem -outform DER | sha256sum"],
        cwd=bag,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert printed.split()[0] == real  # the documented command prints the fingerprint
    assert f"signed by the key with fingerprint {real}" in run_verify(bag).stdout
    for form in (printed.strip(), real.upper(), ":".join(real[i : i + 2] for i in range(0, 64, 2))):
        result = run_verify(bag, "--key-fingerprint", form)
        assert result.returncode == 0, (form, result.stdout)
        assert result.stdout.splitlines()[-1] == (
            f"Sender checked: the package is signed by the key with fingerprint {real}, one "
            "of the keys you gave."
        )
    stranger = "ab" * 32
    assert run_verify(bag, "--key-fingerprint", stranger, "--key-fingerprint", real).returncode == 0
    said = fails(bag, "--key-fingerprint", stranger)
    assert f"fingerprint {real}, which is none of the keys you gave ({stranger})" in said
    trusted = tmp_path / "trusted.pem"
    trusted.write_text(checkpoints.public_pem(checkpoints.signing_key().public_key()))
    assert run_verify(bag, "--trusted-key", str(trusted)).returncode == 0
    other = tmp_path / "other.pem"
    other.write_text(verifier.public_pem(verifier.ed25519_public(b"\x01" * 32)))
    assert "which is none of the keys you gave" in fails(bag, "--trusted-key", str(other))


def test_refused_inputs_are_said_in_words(bag, tmp_path):
    bad = run_verify(bag, "--key-fingerprint", "12ab")
    assert bad.returncode == 2 and "is not a SHA-256 fingerprint (64 hex digits)" in bad.stderr
    missing = tmp_path / "nowhere.pem"
    assert f"FAILED: --trusted-key {missing}: No such file" in fails(
        bag, "--trusted-key", str(missing)
    )
    notakey = tmp_path / "notakey.pem"
    notakey.write_text("hello\n")
    said = fails(bag, "--witness-key", str(notakey))
    assert f"FAILED: --witness-key {notakey}: not an Ed25519 public key in PEM" in said
    empty = tmp_path / "empty"
    empty.mkdir()
    assert f"FAILED: {empty}: no checkpoint there" in fails(
        bag, "--previous-checkpoint", str(empty)
    )
    said = fails(bag, "--witnesses-required", "1")
    assert "--witnesses-required 1: between 1 and the number of --witness-key given (0)" in said


def test_manage_py_verify_package_takes_the_same_options(bag):
    real = real_fingerprint()
    out = io.StringIO()
    call_command("verify_package", str(bag), "--key-fingerprint", real, stdout=out)
    assert out.getvalue().startswith("OK: 3 payload files")
    assert "Sender checked" in out.getvalue().splitlines()[-1]
    out = io.StringIO()
    call_command("verify_package", str(bag), stdout=out)
    assert "The sender's identity was NOT checked" in out.getvalue().strip().splitlines()[-1]
    with pytest.raises(CommandError, match="FAILED: the package is signed by the key"):
        call_command("verify_package", str(bag), "--key-fingerprint", "cd" * 32, stdout=out)
    with pytest.raises(CommandError, match="not a SHA-256 fingerprint"):
        call_command("verify_package", str(bag), "--key-fingerprint", "x", stdout=out)


def test_a_checkpoint_published_after_the_package_is_checked_back_to_it(bag, tmp_path):
    """The court holds a newer published checkpoint: its proof from the package's
    checkpoint shows the package's is in the log it follows; a held checkpoint signed by
    a key the court does not trust is refused when the sender's key is anchored."""
    size = _json(bag / CHECKPOINT)["size"]
    _row, published = publish_audit_checkpoint(out=tmp_path / "published")
    assert _json(published / "checkpoint.json")["consistency_from_previous"]["size"] == size
    result = run_verify(bag, "--previous-checkpoint", str(published))
    assert result.returncode == 0, result.stdout
    assert "is consistent with the one you hold" in result.stdout
    assert "NOT checked" in result.stdout.splitlines()[-1]  # a checkpoint is not the sender
    cut = tmp_path / "cut.json"
    doc = _json(published / "checkpoint.json")
    doc["consistency_from_previous"] = None
    cut.write_text(json.dumps(doc))
    assert "is newer than the package's" in fails(bag, "--previous-checkpoint", str(cut))
    real = real_fingerprint()
    anchored = run_verify(bag, "--previous-checkpoint", str(published), "--key-fingerprint", real)
    assert anchored.returncode == 0, anchored.stdout
    stranger = Ed25519PrivateKey.generate()
    doc = _json(published / "checkpoint.json")
    doc["signature"] = base64.b64encode(stranger.sign(doc["signed_text"].encode())).decode()
    doc["public_key"] = checkpoints.public_pem(stranger.public_key())
    other = tmp_path / "other.json"
    other.write_text(json.dumps(doc))
    assert run_verify(bag, "--previous-checkpoint", str(other)).returncode == 0
    said = fails(bag, "--previous-checkpoint", str(other), "--key-fingerprint", real)
    theirs = verifier.fingerprint(stranger.public_key().public_bytes_raw())
    assert f"the checkpoint you hold is signed by the key with fingerprint {theirs}" in said
