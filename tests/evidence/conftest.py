import hashlib

import pytest
from django.core.management import call_command

from casefiles.access import INVESTIGATOR_GROUP, Role
from tests.factories import MembershipFactory, UserFactory


@pytest.fixture
def taker(db, case):
    """The investigator who takes evidence in."""
    user = UserFactory(username="taker", groups=[INVESTIGATOR_GROUP])
    MembershipFactory(user=user, case=case, role=Role.INVESTIGATOR)
    return user


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@pytest.fixture
def ingest(case, taker, capsys):
    """Run `manage.py ingest` as a user would; return (exit code, stdout, stderr)."""

    def run(path, *extra, jobs=1):
        from django.core.management.base import CommandError

        args = [str(path), "--case", case.reference, "--source", "Witness W-0001"]
        args += ["--as", taker.username, "--jobs", str(jobs), *extra]
        try:
            call_command("ingest", *args)
            code = 0
        except CommandError as exc:
            code = exc.returncode
            print(exc, file=__import__("sys").stderr)
        out, err = capsys.readouterr()
        return code, out, err

    return run
