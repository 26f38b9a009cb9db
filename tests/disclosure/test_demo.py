"""A package of the demo case, from the commands as the README gives them: the Library of
Congress validator accepts it, verify_package too, and a flipped byte fails both, named.
The photographer (Critical protection, no consent to be named) stays a pseudonym."""

import io
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from demo import story
from people.models import Person

pytestmark = pytest.mark.django_db
BAGIT = str(Path(sys.executable).parent / "bagit.py")


@pytest.fixture(autouse=True)
def _checkpoint_key(tmp_path, settings):  # the data directory: conftest's data_dir
    settings.ATHAR_CHECKPOINT_KEY_FILE = tmp_path / "data" / "checkpoint_key.pem"


def _run(*args) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def test_a_package_of_the_demo_case_validates_and_a_flipped_byte_is_named(tmp_path):
    call_command("seed_demo", stdout=io.StringIO())
    pk = _run(
        "disclosure",
        "request",
        "--case",
        story.MAIN_CASE,
        "--select",
        "all",
        "--recipient",
        "A war-crimes unit of a European prosecutor (fictional)",
        "--purpose",
        "prosecution",
        "--as",
        "lawyer",
    ).strip()
    assert "approved" in _run("disclosure", "approve", pk, "--as", "lead")
    bag = tmp_path / "bag"
    assert "ready" in _run("disclosure", "build", pk, "--out", str(bag))
    result = subprocess.run([BAGIT, "--validate", str(bag)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert _run("verify_package", str(bag)).startswith("OK: ")
    text = "\n".join(
        p.read_bytes().decode("utf-8", "replace") for p in bag.rglob("*") if p.is_file()
    )
    photographer = Person.objects.get(protection_level="critical").open_identity()
    for value in photographer.names():
        assert value not in text
    victim = next((bag / "data" / "originals").iterdir())
    data = bytearray(victim.read_bytes())
    data[100] ^= 0x40
    victim.write_bytes(bytes(data))
    result = subprocess.run([BAGIT, "--validate", str(bag)], capture_output=True, text=True)
    assert result.returncode != 0 and victim.name in result.stderr
    with pytest.raises(CommandError, match=f"data/originals/{victim.name}"):
        _run("verify_package", str(bag))
