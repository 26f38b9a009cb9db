"""Near-duplicate groups are never made from a read that an intake in flight outdates."""

import subprocess
import sys
import time

import pytest

from tests.evidence.helpers import postgres_only
from tests.scratch_db import ROOT, run_manage, scratch_database

pytestmark = [pytest.mark.django_db, postgres_only]

SETUP = """
from casefiles.models import Case
Case.objects.create(reference="SYR-2014-001", title="Detention photographs")
"""

# An intake's transaction, as record_intake writes one: the case's references taken under
# its lock, then two near-identical photos; it commits a while after the flag is up.
INTAKE = """
import os, time
from pathlib import Path
from django.db import transaction
from casefiles.models import Case
from evidence import services
from evidence.models import EvidenceItem, StoredFile
case = Case.objects.get(reference="SYR-2014-001")
with transaction.atomic():
    refs = services.next_references(case, 2)
    for n, ref in enumerate(refs):
        sha = f"{n:064x}"
        sf = StoredFile.objects.create(
            sha256=sha, size=1, media_type="image/jpeg", storage_key=f"sha256/{sha}"
        )
        EvidenceItem.objects.create(
            case=case, reference=ref, kind="photo", title=ref, original_filename=ref,
            original_path=ref, original=sf, phash=0x0F0F0F00 + n,
        )
    Path(os.environ['INTAKE_FLAG']).touch()
    time.sleep(3)
"""

REGROUP = """
from casefiles.models import Case
from evidence import near_duplicates
print("groups", near_duplicates.regroup_near_duplicates(Case.objects.get(reference="SYR-2014-001")))
"""


def test_a_regroup_waits_for_the_intake_in_flight_and_groups_what_it_wrote(tmp_path):
    flag = tmp_path / "written"
    with scratch_database(tmp_path) as env:
        run_manage(env, "shell", "--no-imports", "-c", SETUP)
        intake = subprocess.Popen(
            [sys.executable, str(ROOT / "manage.py"), "shell", "--no-imports", "-c", INTAKE],
            cwd=ROOT,
            env={**env, "INTAKE_FLAG": str(flag)},
        )
        for _ in range(300):
            if flag.exists() or intake.poll() is not None:
                break
            time.sleep(0.05)
        assert flag.exists(), "the intake did not start"
        regroup = run_manage(env, "shell", "--no-imports", "-c", REGROUP)
        assert intake.wait(timeout=60) == 0
        assert regroup.stdout.strip() == "groups 1"
