"""One fingerprint (issue 30): the keys page, /.well-known/athar-signing-keys, `manage.py
signing_key show`, the package's VERIFY.txt, its verify.py, the openssl line the
instructions give and the custody report print the very same string for the key that
signed a package."""

import io
import json
import re
import shlex
import shutil
import subprocess

import pytest
from django.core.management import call_command

from tests.factories import UserFactory

from .test_bag import approved, build

pytestmark = pytest.mark.django_db
HEX = re.compile(r"[0-9a-f]{64}")


def _only(found: list[str], where: str) -> str:
    assert len(set(found)) == 1, (where, found)
    return found[0]


def _openssl_line(verify_txt: str) -> str:
    """The fingerprint command exactly as VERIFY.txt shows it (the same in both halves)."""
    lines = {line.strip() for line in verify_txt.splitlines() if "openssl pkey " in line}
    return _only(sorted(lines), "VERIFY.txt's openssl line")


def test_the_page_the_command_verify_txt_verify_py_and_openssl_print_one_string(
    client, world, tmp_path
):
    bag = tmp_path / "bag"
    build(approved(world), bag)
    verify_txt = (bag / "VERIFY.txt").read_text(encoding="utf-8")
    seen = {}

    # The documented openssl line, run as a shell runs it, on the package's key.
    command = _openssl_line(verify_txt)
    assert "public-key.pem" in shlex.split(command)
    printed = subprocess.run(
        ["sh", "-c", command], cwd=bag, capture_output=True, text=True, check=True
    )
    seen["openssl"] = printed.stdout.split()[0]

    # The page for signed-in users, and the public list.
    client.force_login(UserFactory(username="clerk-reader"))
    page = client.get("/keys/").content.decode()
    seen["/keys/"] = _only(re.findall(r'<code class="hash" dir="ltr">([^<]*)</code>', page), "page")
    client.logout()
    listing = json.loads(client.get("/.well-known/athar-signing-keys").content)
    seen["well-known"] = _only([k["fingerprint"] for k in listing["keys"]], "well-known")

    # The command.
    out = io.StringIO()
    call_command("signing_key", "show", stdout=out)
    seen["signing_key show"] = out.getvalue().split()[0]

    # VERIFY.txt, in both halves: the line under "has the fingerprint".
    said = re.findall(r"^ {3}(\S+)[;؛]$", verify_txt, flags=re.MULTILINE)
    assert len(said) == 2, said
    seen["VERIFY.txt"] = _only(said, "VERIFY.txt")

    # verify.py, under a bare interpreter, without an anchor and then with the fingerprint.
    python = shutil.which("python3") or "python3"
    bare = subprocess.run(
        [python, "-I", "verify.py", "."], cwd=bag, capture_output=True, text=True, check=True
    )
    last = bare.stdout.strip().splitlines()[-1]
    assert "NOT checked" in last
    seen["verify.py"] = _only(re.findall(r"this package's key is (\S+)\.$", last), "verify.py")
    anchored = subprocess.run(
        [python, "-I", "verify.py", ".", "--key-fingerprint", seen["openssl"]],
        cwd=bag,
        capture_output=True,
        text=True,
    )
    assert anchored.returncode == 0, anchored.stdout + anchored.stderr
    checked = anchored.stdout.strip().splitlines()[-1]
    assert checked.startswith("Sender checked")
    seen["verify.py --key-fingerprint"] = _only(HEX.findall(checked), "verify.py, anchored")

    # The custody report inside the bag, for the reader without a terminal.
    text = subprocess.run(
        [shutil.which("pdftotext") or "pdftotext", "-raw", str(bag / "custody-report.pdf"), "-"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    after = re.findall(r"The key in this package has the fingerprint:.*\n\s*(\S+)", text)
    seen["custody-report.pdf"] = _only(after, "custody-report.pdf")

    assert len(set(seen.values())) == 1, seen
    assert HEX.fullmatch(seen["openssl"]), seen
