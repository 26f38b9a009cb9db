"""The README's examples, and the docs' commands, run as written on the demo data.

Every ```sh block of README.md and docs/**/*.md is read; each command in it (backslash
continuations joined, comments and blank lines dropped) runs with bash, in order, from
the root of a copy of the repository whose ``var/`` is a scratch data directory and
database that `make run` would have seeded (``seed_demo``). A
``cd``, ``.``/``source`` or ``export`` earlier in a block holds for the commands after it
in that block, as in a terminal. The virtualenv is active, as the README's block asks.

Not run, by these rules (each in ``SKIPPED`` with its reason):
- ``make ...``: ``make run`` starts a server and ``make test`` runs this whole suite;
- ``python bench/...``: benchmarks are slow and run by hand (they are not part of the
  suite, see the README);
- ``openssl ts ...``: it needs a timestamp authority's reply and certificates, which only
  exist with ``ATHAR_TSA_URL`` set to a real authority (tests/casefiles/test_timestamps.py
  checks the reply Athar stores).
"""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.scratch_db import ROOT, run_manage, scratch_database

SKIPPED = {
    "make ": "starts a server or runs the whole suite",
    "python bench/": "a benchmark: slow, run by hand",
    ".venv/bin/python bench/": "a benchmark: slow, run by hand",
    "openssl ts ": "needs a timestamp authority's reply and certificates",
}
STATEFUL = re.compile(r"^(cd|\.|source|export)\s")
SOURCES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("**/*.md"))]


def sh_commands(path: Path) -> list[list[str]]:
    """The commands of each ```sh block of a Markdown file, one list per block."""
    blocks = re.findall(r"^```sh\n(.*?)^```", path.read_text(), flags=re.S | re.M)
    result = []
    for block in blocks:
        commands, current = [], ""
        for line in block.splitlines():
            if line.rstrip().endswith("\\"):
                current += line.rstrip()[:-1] + " "
                continue
            current += line
            if current.strip() and not current.strip().startswith("#"):
                commands.append(current.strip())
            current = ""
        result.append(commands)
    return result


def skip_reason(command: str) -> str | None:
    return next((why for start, why in SKIPPED.items() if command.startswith(start)), None)


def test_the_commands_are_found_and_the_rules_leave_the_examples_in():
    readme = [c for block in sh_commands(ROOT / "README.md") for c in block]
    assert "make run    # the app on SQLite with demo data, at http://127.0.0.1:8000" in readme
    assert any(c.startswith("python manage.py ingest var/demo/usb-stick ") for c in readme)
    assert sum(1 for c in readme if skip_reason(c) is None) >= 5


def _copy_of_the_repository(tmp_path: Path, data: Path) -> Path:
    """A fresh clone's layout, by symbolic links to this one, whose var/ is ``data``:
    what the examples write (var/, trusted.pem) stays in the test's folder."""
    clone = tmp_path / "clone"
    clone.mkdir()
    for entry in ROOT.iterdir():
        if entry.name in {"var", ".git", ".pytest_cache", ".ruff_cache"}:
            continue
        (clone / entry.name).symlink_to(entry)
    if not (clone / ".venv").exists():
        (clone / ".venv").symlink_to(Path(sys.prefix))
    (clone / "var").symlink_to(data)
    return clone


@pytest.mark.django_db
def test_every_readme_and_docs_command_runs_as_written_on_the_demo_data(tmp_path):
    with scratch_database(tmp_path) as env:
        data = Path(env["ATHAR_DATA_DIR"])
        data.mkdir(parents=True, exist_ok=True)
        run_manage(env, "seed_demo")
        clone = _copy_of_the_repository(tmp_path, data)
        env = {**env, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"}
        env.pop("VIRTUAL_ENV", None)
        ran = []
        for source in SOURCES:
            for block in sh_commands(source):
                state = []
                for command in block:
                    if skip_reason(command):
                        continue
                    script = "\n".join(["set -e", *state, command])
                    result = subprocess.run(
                        ["bash", "-c", script],
                        cwd=clone,
                        env=env,
                        capture_output=True,
                        text=True,
                        timeout=900,
                    )
                    where = f"{source.relative_to(ROOT)}: {command}"
                    assert result.returncode == 0, (
                        f"{where}\nexit {result.returncode}\n{result.stdout}\n{result.stderr}"
                    )
                    if STATEFUL.match(command):
                        state.append(command)
                    ran.append(where)
        # The README's intake example took in the second demo stick, all matching its list.
        assert any("manage.py ingest var/demo/usb-stick" in r for r in ran)
        assert "DCIM/102CANON/IMG_0017.JPG" in (clone / "var" / "metadata.csv").read_text()
        assert any("verify_audit --checkpoint var/checkpoints/latest" in r for r in ran)
