"""The Makefile's recipes, read with `make -n` (printed, never run: nothing is built,
installed or served) and, where they only print, run in a shell whose `dpkg`, `id` and
`apt-get` are stand-ins."""

import os
import re
import subprocess
from pathlib import Path

import pytest

from tests.scratch_db import ROOT


def _recipe(*args: str) -> str:
    # Under `make test` this make is a sub-make: without its parent's flags and level it
    # prints the recipe alone (no "Entering directory" lines), as it does from a shell.
    env = {k: v for k, v in os.environ.items() if k not in {"MAKEFLAGS", "MFLAGS", "MAKELEVEL"}}
    return subprocess.run(
        ["make", "-n", "--no-print-directory", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        env=env,
    ).stdout


def test_make_run_serves_on_the_port_it_is_given_and_tells_the_settings():
    (serve,) = [line for line in _recipe("run", "PORT=8101").splitlines() if "runserver" in line]
    assert serve.rstrip().endswith("manage.py runserver 127.0.0.1:8101")
    assert "ATHAR_PORT=8101 " in serve  # the security keys' origin (tests/test_env.py)
    (default,) = [line for line in _recipe("run").splitlines() if "runserver" in line]
    assert default.rstrip().endswith("manage.py runserver 127.0.0.1:8000")
    assert "ATHAR_PORT=8000 " in default


def _stand_ins(tmp_path: Path, uid: int) -> dict[str, str]:
    """A PATH where no Debian package is installed, `id -u` says ``uid`` and `apt-get`
    only writes down what it was asked."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    scripts = {
        "dpkg": "exit 1",
        "id": f"echo {uid}",
        "apt-get": f'echo "$@" >> {tmp_path / "apt.log"}',
    }
    for name, body in scripts.items():
        (bin_dir / name).write_text(f"#!/bin/sh\n{body}\n")
        (bin_dir / name).chmod(0o755)
    return {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"}


PDF_DEBS = "fonts-hosny-amiri libharfbuzz-subset0 poppler-utils"


@pytest.mark.parametrize(
    ("uid", "said"),
    [
        (0, f"installing {PDF_DEBS} for the custody report"),
        (1000, f"not installed: {PDF_DEBS} (the custody report needs them)"),
    ],
)
def test_the_custody_report_packages_are_named_on_one_line(tmp_path, uid, said):
    ran = subprocess.run(
        ["bash", "-c", _recipe("pdf-deps")],
        env=_stand_ins(tmp_path, uid),
        capture_output=True,
        text=True,
        check=True,
    )
    assert ran.stdout.splitlines() == [said]
    if uid == 0:
        assert (tmp_path / "apt.log").read_text().split()[-3:] == PDF_DEBS.split()


def test_the_readme_names_the_packages_the_makefile_installs():
    makefile = (ROOT / "Makefile").read_text()
    (listed,) = re.findall(r"^PDF_DEBS := (.*)$", makefile, flags=re.M)
    assert listed.split() == PDF_DEBS.split()
    readme = " ".join((ROOT / "README.md").read_text().split())
    assert all(f"`{package}`" in readme for package in PDF_DEBS.split())
