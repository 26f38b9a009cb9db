"""Witnesses (C2SP tlog-cosignature): `verify.py cosign` and `manage.py witness cosign`
check a checkpoint against the log's key and the last one they cosigned, never go back
nor cosign two roots for one size; a package's checkpoint cosigned by a witness passes
`--witness-key`, a forged one cosigned by nobody does not."""

import base64
import hashlib
import io
import json
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from django.core.management import call_command
from django.core.management.base import CommandError

from casefiles import checkpoints
from disclosure import verifier
from disclosure.management.commands import witness

from .signing import change_checkpoint
from .test_bag import approved, build
from .test_forger import PYTHON, forge, real_fingerprint, run_verify

VERIFIER = Path(verifier.__file__)
ORIGIN = "athar/test"


def openssl_key(where: Path) -> tuple[Path, Path]:
    private, public = where.with_suffix(".pem"), where.with_suffix(".pub.pem")
    subprocess.run(["openssl", "genpkey", "-algorithm", "ed25519", "-out", private], check=True)
    subprocess.run(["openssl", "pkey", "-in", private, "-pubout", "-out", public], check=True)
    return private, public


def raw_public(pem: Path) -> bytes:
    key = serialization.load_pem_public_key(pem.read_bytes())
    return key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def publish(folder: Path, leaves: list[bytes], size: int, key, previous: int = 0) -> Path:
    """A published checkpoint of the first ``size`` leaves (as audit_checkpoint writes
    it), with a consistency proof from ``previous`` leaves when given."""
    _, root = checkpoints.root_of(leaves[:size])
    signed = checkpoints.SignedCheckpoint(ORIGIN, size, root)
    doc = {
        "format": "athar-audit-checkpoint/1",
        "origin": ORIGIN,
        "size": size,
        "root": root.hex(),
        "signed_text": signed.text(),
        "signature": base64.b64encode(checkpoints.sign(signed, key)).decode(),
        "public_key": checkpoints.public_pem(key.public_key()),
        "timestamp_reply": None,
        "created_at": "2027-01-01T00:00:00+00:00",
        "consistency_from_previous": None,
    }
    if previous:
        proof = checkpoints.consistency_proof(leaves, previous, size)
        doc["consistency_from_previous"] = {
            "size": previous,
            "root": checkpoints.root_of(leaves[:previous])[1].hex(),
            "proof": [p.hex() for p in proof],
        }
    return checkpoints.write_files(folder, doc)


def cosign_cli(checkpoint: Path, key: Path, state: Path, *more: str, name="court.example/w"):
    command = [PYTHON, "-I", str(VERIFIER), "cosign", "--key", str(key), "--name", name]
    command += ["--state", str(state), *more, str(checkpoint)]
    return subprocess.run(command, capture_output=True, text=True, env={})


@pytest.fixture
def log(tmp_path):
    """A log's key and leaves, a witness's key (made by openssl) and its state folder."""
    key = Ed25519PrivateKey.generate()
    leaves = [hashlib.sha256(b"entry %d" % i).digest() for i in range(20)]
    private, public = openssl_key(tmp_path / "witness")
    fp = verifier.fingerprint(key.public_key().public_bytes_raw())
    return key, leaves, private, public, tmp_path / "state", fp


def test_a_cosignature_is_the_c2sp_line_and_verifies_with_cryptography(log, tmp_path):
    key, leaves, private, public, state, fp = log
    first = publish(tmp_path / "published", leaves, 4, key)
    before = int(time.time())
    result = cosign_cli(first, private, state, "--log-fingerprint", fp)
    assert result.returncode == 0, result.stderr
    assert "the first checkpoint of this log this witness cosigns" in result.stderr
    (line,) = result.stdout.splitlines()
    dash, name, blob = line.split(" ")
    assert dash == "\u2014" and name == "court.example/w"
    raw = base64.b64decode(blob)
    pub = raw_public(public)
    assert raw[:4] == hashlib.sha256(b"court.example/w\n\x04" + pub).digest()[:4]
    when = int.from_bytes(raw[4:12], "big")
    assert before <= when <= int(time.time())
    text = (first / "checkpoint.txt").read_text()
    message = f"cosignature/v1\ntime {when}\n{text}".encode()
    serialization.load_pem_public_key(public.read_bytes()).verify(raw[12:], message)
    recorded = json.loads((state / "witness-state.json").read_text())
    assert recorded["logs"][ORIGIN]["size"] == 4


def test_cosign_goes_forward_only_and_never_signs_two_roots_for_one_size(log, tmp_path):
    key, leaves, private, _public, state, fp = log
    out = tmp_path / "published"
    first = cosign_cli(publish(out, leaves, 4, key), private, state, "--log-fingerprint", fp)
    assert first.returncode == 0, first.stderr
    seven = publish(out, leaves, 7, key, previous=4)
    result = cosign_cli(seven, private, state, "--log-fingerprint", fp)
    assert result.returncode == 0, result.stderr
    assert "it extends size 4, which this witness cosigned" in result.stderr
    back = cosign_cli(out / "checkpoint-4", private, state, "--log-fingerprint", fp)
    assert back.returncode == 1 and not back.stdout
    assert "size 4 is older than size 7, which this witness cosigned" in back.stderr
    fork = [*leaves[:5], *(hashlib.sha256(b"rewritten %d" % i).digest() for i in range(15))]
    forked = tmp_path / "forked"
    other = cosign_cli(
        publish(forked, fork, 7, key, previous=4), private, state, "--log-key", _pem(key, tmp_path)
    )
    assert other.returncode == 1 and not other.stdout
    assert (
        "for which this witness cosigned root" in other.stderr and "two histories" in other.stderr
    )
    later = cosign_cli(
        publish(forked, fork, 9, key, previous=7), private, state, "--log-fingerprint", fp
    )
    assert later.returncode == 1 and "not consistent with size 7" in later.stderr
    assert json.loads((state / "witness-state.json").read_text())["logs"][ORIGIN]["size"] == 7


def _pem(key, tmp_path: Path) -> str:
    path = tmp_path / "log.pub.pem"
    path.write_text(checkpoints.public_pem(key.public_key()))
    return str(path)


def test_cosign_needs_the_log_s_key_and_a_proof_from_the_last_it_cosigned(log, tmp_path):
    key, leaves, private, _public, state, fp = log
    out = tmp_path / "published"
    four = publish(out, leaves, 4, key)
    nobody = cosign_cli(four, private, state)
    assert nobody.returncode == 1 and "give the log's key" in nobody.stderr
    stranger = verifier.fingerprint(Ed25519PrivateKey.generate().public_key().public_bytes_raw())
    wrong = cosign_cli(four, private, state, "--log-fingerprint", stranger)
    assert wrong.returncode == 1 and f"not by the log's ({stranger})" in wrong.stderr
    assert not (state / "witness-state.json").exists()
    assert cosign_cli(four, private, state, "--log-fingerprint", fp).returncode == 0
    twelve = publish(out, leaves, 12, key, previous=9)  # its proof is from 9, not 4
    result = cosign_cli(twelve, private, state, "--log-fingerprint", fp)
    assert result.returncode == 1
    assert "carries no consistency proof from size 4" in result.stderr
    proof = tmp_path / "proof.json"
    path = checkpoints.consistency_proof(leaves, 4, 12)
    ends = {
        "from": {"size": 4, "root": checkpoints.root_of(leaves[:4])[1].hex()},
        "to": {"size": 12, "root": checkpoints.root_of(leaves[:12])[1].hex()},
        "proof": [p.hex() for p in path],
    }
    wrong_ends = {**ends, "from": {"size": 3, "root": checkpoints.root_of(leaves[:3])[1].hex()}}
    proof.write_text(json.dumps(wrong_ends))
    result = cosign_cli(twelve, private, state, "--log-fingerprint", fp, "--proof", str(proof))
    assert result.returncode == 1
    assert "not from the last checkpoint this witness cosigned (size 4" in result.stderr
    proof.write_text(json.dumps({**ends, "to": {"size": 13, "root": ends["to"]["root"]}}))
    result = cosign_cli(twelve, private, state, "--log-fingerprint", fp, "--proof", str(proof))
    assert result.returncode == 1 and "a proof to size 13, not to this checkpoint" in result.stderr
    proof.write_text("{}")
    result = cosign_cli(twelve, private, state, "--log-fingerprint", fp, "--proof", str(proof))
    assert result.returncode == 1 and "not a consistency proof" in result.stderr
    proof.write_text(json.dumps(ends))
    result = cosign_cli(twelve, private, state, "--log-fingerprint", fp, "--proof", str(proof))
    assert result.returncode == 0, result.stderr
    other = cosign_cli(twelve, private, state, "--log-fingerprint", fp, name="someone-else")
    assert other.returncode == 1 and "the state of witness court.example/w" in other.stderr


def test_manage_py_witness_cosign_is_the_same_function_and_gives_the_same_bytes(log, tmp_path):
    key, leaves, private, public, _state, fp = log
    four = publish(tmp_path / "published", leaves, 4, key)
    options = dict(key=private, name="court.example/w", log_fingerprints=[fp], now=1_800_000_000)
    pure, _ = verifier.cosign(four, state=tmp_path / "a", **options)
    with_cryptography, _ = verifier.cosign(four, state=tmp_path / "b", sign=witness.sign, **options)
    assert pure == with_cryptography
    out, err = io.StringIO(), io.StringIO()
    call_command(
        "witness",
        "cosign",
        "--key",
        str(private),
        "--name",
        "court.example/w",
        "--state",
        str(tmp_path / "c"),
        "--log-fingerprint",
        fp,
        str(four),
        stdout=out,
        stderr=err,
    )
    parsed = verifier.parse_cosignature(out.getvalue().strip())
    assert parsed is not None and parsed.name == "court.example/w"
    message = verifier.cosigned_message(parsed.time, (four / "checkpoint.txt").read_text())
    assert verifier.ed25519_verify(raw_public(public), message, parsed.signature)
    with pytest.raises(CommandError, match=r"REFUSED: .*older than size 4"):
        three = publish(tmp_path / "published", leaves, 3, key)
        call_command(
            "witness",
            "cosign",
            "--key",
            str(private),
            "--name",
            "court.example/w",
            "--state",
            str(tmp_path / "c"),
            "--log-fingerprint",
            fp,
            str(three),
            stdout=io.StringIO(),
            stderr=io.StringIO(),
        )


@pytest.mark.django_db
def test_a_package_s_checkpoint_cosigned_by_a_witness_passes_and_a_forged_one_fails(
    world, tmp_path
):
    bag = tmp_path / "PKG-0001"
    build(approved(world), bag)
    real = real_fingerprint()
    private, public = openssl_key(tmp_path / "court")
    other_private, other_public = openssl_key(tmp_path / "ngo")
    result = subprocess.run(
        [
            *(PYTHON, "-I", "verify.py", "cosign", "--key", str(private)),
            *("--name", "court.example", "--state", str(tmp_path / "state")),
            *("--log-fingerprint", real, "."),
        ],
        cwd=bag,
        capture_output=True,
        text=True,
        env={},
    )
    assert result.returncode == 0, result.stderr
    line = result.stdout.strip()
    change_checkpoint(bag, lambda doc: doc.__setitem__("cosignatures", [line]))
    passed = run_verify(bag, "--witness-key", str(public), "--key-fingerprint", real)
    assert passed.returncode == 0, passed.stdout
    assert "Witnesses checked: the checkpoint (size" in passed.stdout
    assert (
        f"cosigned by court.example (key fingerprint {verifier.fingerprint(raw_public(public))}"
        in passed.stdout
    )
    # Two witnesses given, one cosigned: all are required unless told otherwise.
    both = ["--witness-key", str(public), "--witness-key", str(other_public)]
    result = run_verify(bag, *both)
    assert result.returncode == 1
    other_fp = verifier.fingerprint(raw_public(other_public))
    assert "is cosigned by 1 of the witnesses you gave, 2 required" in result.stdout
    assert f"no cosignature by the witness key with fingerprint {other_fp}" in result.stdout
    assert run_verify(bag, *both, "--witnesses-required", "1").returncode == 0
    # The forger keeps the genuine cosignature: it is not over the forged checkpoint.
    forged = tmp_path / "forged"
    shutil.copytree(bag, forged)
    forge(forged, tmp_path / "forger")
    result = run_verify(forged, "--witness-key", str(public))
    assert result.returncode == 1
    assert "the cosignature of witness court.example" in result.stdout
    assert "does not verify over this checkpoint" in result.stdout
    # Cosigned by nobody.
    nobody = tmp_path / "nobody"
    shutil.copytree(bag, nobody)
    forge(nobody, tmp_path / "forger2", "--drop-cosignatures")
    result = run_verify(nobody, "--witness-key", str(public))
    assert result.returncode == 1
    assert "is cosigned by 0 of the witnesses you gave, 1 required" in result.stdout
    # And no witness cosigns it: it is not signed by the log's key.
    refused = cosign_cli(nobody, other_private, tmp_path / "ngo-state", "--log-fingerprint", real)
    assert refused.returncode == 1 and "not by the log's" in refused.stderr
