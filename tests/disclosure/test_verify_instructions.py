"""The README's steps for checking a package are the very commands its VERIFY.txt gives
(in English and in Arabic), and each of them passes on a built package."""

import re
import shlex
import shutil
import subprocess

import pytest

from disclosure.verify_text import VERIFY_TXT
from tests.scratch_db import ROOT
from tests.test_readme import sh_commands

from .test_bag import bag  # noqa: F401  (the fixture)

pytestmark = pytest.mark.django_db

TEXT = VERIFY_TXT.format(code="PKG-0001", fingerprint="0" * 64)


def _commands(text: str) -> list[str]:
    """The commands of a VERIFY.txt: its lines indented as code (seven spaces)."""
    return [line.strip() for line in text.splitlines() if re.match(r" {7}\S", line)]


def _halves() -> tuple[list[str], list[str]]:
    english, arabic = TEXT.split("طريقة التحقق من هذه الحزمة")
    return _commands(english), _commands(arabic)


def _readme_steps() -> list[str]:
    (block,) = [b for b in sh_commands(ROOT / "README.md") if "bagit.py --validate ." in b]
    return [c for c in block if not c.startswith(("cd ", "export "))]


def test_english_and_arabic_give_the_same_commands():
    english, arabic = _halves()
    assert len(english) >= 4
    assert english == arabic


def test_the_readme_gives_the_commands_verify_txt_gives():
    english, _ = _halves()
    assert _readme_steps() == english


def test_both_check_the_tag_manifest():
    english, _ = _halves()
    for commands in (english, _readme_steps()):
        assert "sha256sum -c tagmanifest-sha256.txt" in commands
        assert any("tagmanifest-sha256.txt.sig" in c for c in commands)


def test_installing_the_validator_is_a_step_before_and_no_check_needs_a_network():
    english, arabic = TEXT.split("طريقة التحقق من هذه الحزمة")
    for half in (english, arabic):
        before, checks = half.split("bagit.py --validate .", 1)
        assert "pip install bagit" in before and "pip" not in checks
        assert "/.well-known/athar-signing-keys" in before
    for command in _halves()[0]:
        assert not command.startswith(("pip", "curl", "wget")), command


def test_every_command_of_the_package_s_verify_txt_passes_on_it(bag):  # noqa: F811
    text = (bag / "VERIFY.txt").read_text()
    commands = _commands(text)
    english, arabic = _halves()
    assert commands == english + arabic
    assert (bag / "tagmanifest-sha256.txt").exists()
    fingerprint = ""
    for command in english:
        args = shlex.split(command)
        if args[0] == "bagit.py" and not shutil.which("bagit.py"):
            continue  # the validator is a pip package of its own (tests/disclosure/test_bag.py)
        if "|" in args:  # the fingerprint: one command piped into another, as a shell runs it
            left, right = " ".join(args).split(" | ")
            first = subprocess.run(shlex.split(left), cwd=bag, capture_output=True, check=True)
            result = subprocess.run(
                shlex.split(right), input=first.stdout, cwd=bag, capture_output=True
            )
            fingerprint = result.stdout.decode().split()[0]
            assert f"   {fingerprint};" in text  # what the package says its key is
        else:
            # The reader types the fingerprint they got from the sender: here, the real one.
            args = [fingerprint if a == "$FINGERPRINT" else a for a in args]
            result = subprocess.run(args, cwd=bag, capture_output=True, text=True)
        assert result.returncode == 0, (command, result.stdout, result.stderr)
