"""The forger of issue 30, run as a script of its own (tests/disclosure/forger.py: the
standard library and openssl, no Athar): it replaces a photo, recomputes every hash and
proof, a checkpoint of the same size, and signs with its own key. Its bag passes every
check the package prescribes; only what the recipient holds from outside catches it: the
sender's fingerprint, a checkpoint of an earlier genuine package."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from casefiles import checkpoints
from disclosure import verifier
from tests.evidence.images import jpeg_bytes

from .signing import CHECKPOINT, carry_proof_from, checkpoint_of
from .test_bag import approved, build

pytestmark = pytest.mark.django_db
FORGER = Path(__file__).with_name("forger.py")
PYTHON = shutil.which("python3", path="/usr/local/bin:/usr/bin:/bin") or sys.executable


def run_verify(bag: Path, *args: str) -> subprocess.CompletedProcess:
    """The bag's own verify.py under a bare Python, as the clerk runs it."""
    command = [PYTHON, "-I", "verify.py", ".", *args]
    return subprocess.run(command, cwd=bag, capture_output=True, text=True, env={})


def forge(bag: Path, work: Path, *flags: str) -> str:
    """The forger's script on ``bag``; returns the fingerprint of the forger's key."""
    work.mkdir(exist_ok=True)
    photo = work / "replacement.jpg"
    photo.write_bytes(jpeg_bytes(99))
    command = [PYTHON, "-I", str(FORGER), str(bag), str(photo), str(work), *flags]
    result = subprocess.run(command, capture_output=True, text=True, env={}, check=True)
    return result.stdout.strip()


def real_fingerprint() -> str:
    return verifier.fingerprint(checkpoints.signing_key().public_key().public_bytes_raw())


@pytest.fixture
def packages(world, tmp_path):
    """Two genuine packages of the case to one recipient, the second built after the
    first; the court keeps the first's checkpoint. The second carries a consistency proof
    from it (the build's job: added here where it does not yet)."""
    first, second = tmp_path / "PKG-0001", tmp_path / "PKG-0002"
    build(approved(world), first)
    held = tmp_path / "court" / "checkpoint.json"
    held.parent.mkdir()
    shutil.copy(first / CHECKPOINT, held)
    build(approved(world), second)
    carry_proof_from(second, checkpoint_of(first))
    assert checkpoint_of(second)["size"] > checkpoint_of(first)["size"]
    return first, second, held


def test_the_forger_passes_every_check_but_the_anchors(packages, tmp_path):
    _first, genuine, held = packages
    real = real_fingerprint()
    result = run_verify(genuine, "--key-fingerprint", real, "--previous-checkpoint", str(held))
    assert result.returncode == 0, result.stdout
    assert result.stdout.splitlines()[-1].startswith("Sender checked")
    assert "consistent with the one you hold" in result.stdout

    forged = tmp_path / "forged"
    shutil.copytree(genuine, forged)
    theirs = forge(forged, tmp_path / "forger")
    assert theirs != real
    victim = sorted((forged / "data/originals").iterdir())[0]
    assert victim.read_bytes() == jpeg_bytes(99)
    assert victim.read_bytes() != sorted((genuine / "data/originals").iterdir())[0].read_bytes()
    # What the package prescribes passes: the bag, openssl's signature check, verify.py.
    result = run_verify(forged)
    assert result.returncode == 0, result.stdout
    assert result.stdout.startswith("OK: 3 payload files")
    last = result.stdout.splitlines()[-1]
    assert "The sender's identity was NOT checked" in last and "--key-fingerprint" in last
    assert f"this package's key is {theirs}" in last
    openssl = subprocess.run(
        [
            "openssl",
            "pkeyutl",
            "-verify",
            "-pubin",
            "-inkey",
            "public-key.pem",
            "-rawin",
            "-in",
            "tagmanifest-sha256.txt",
            "-sigfile",
            "signature/tagmanifest-sha256.txt.sig",
        ],
        cwd=forged,
        capture_output=True,
        text=True,
    )
    assert openssl.returncode == 0 and "Verified Successfully" in openssl.stdout
    # The fingerprint the court holds names the forger's key.
    result = run_verify(forged, "--key-fingerprint", real)
    assert result.returncode == 1
    (line,) = result.stdout.splitlines()
    assert line.startswith(f"FAILED: the package is signed by the key with fingerprint {theirs}")
    assert f"none of the keys you gave ({real})" in line
    # The checkpoint the court holds from the earlier package: not consistent with it.
    result = run_verify(forged, "--previous-checkpoint", str(held))
    assert result.returncode == 1
    assert "FAILED: the package's checkpoint" in result.stdout
    assert "is not consistent with the one you hold" in result.stdout
    # The genuine second package's own checkpoint, if the court holds it: same size,
    # another root.
    result = run_verify(forged, "--previous-checkpoint", str(genuine))
    assert result.returncode == 1
    assert "has the size of the one you hold" in result.stdout
    assert "but another root" in result.stdout


def test_a_forger_who_drops_the_proofs_is_told_there_is_none(packages, tmp_path):
    _first, genuine, held = packages
    forged = tmp_path / "forged"
    shutil.copytree(genuine, forged)
    forge(forged, tmp_path / "forger", "--drop-proofs")
    result = run_verify(forged, "--previous-checkpoint", str(held))
    assert result.returncode == 1
    assert "the package carries no consistency proof from the checkpoint you hold" in (
        result.stdout
    )
