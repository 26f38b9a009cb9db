import subprocess
import sys

import pytest
from django.db import connection

from tests.scratch_db import ROOT, run_manage, scratch_database

WORKERS, PER_WORKER = 8, 500


@pytest.mark.django_db
def test_concurrent_appends_leave_one_gap_free_chain(tmp_path):
    if connection.vendor != "postgresql":
        pytest.skip("concurrent writers are a PostgreSQL deployment concern")
    flag = tmp_path / "go"
    with scratch_database(tmp_path) as env:
        procs = [
            subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "tests.casefiles.audit_append_worker",
                    str(w),
                    str(PER_WORKER),
                    str(flag),
                ],
                cwd=ROOT,
                env=env,
                stderr=subprocess.PIPE,
                text=True,
            )
            for w in range(WORKERS)
        ]
        flag.touch()
        for p in procs:
            _, err = p.communicate(timeout=600)
            assert p.returncode == 0, err

        result = run_manage(env, "verify_audit", check=False)
        assert result.returncode == 0, result.stderr
        assert f"{WORKERS * PER_WORKER} entries" in result.stdout

        stats = run_manage(
            env,
            "shell",
            "-c",
            "from django.db.models import Count, Max, Min\n"
            "from casefiles.models import AuditEntry as A\n"
            "a = A.objects.aggregate(n=Count('seq'), lo=Min('seq'), hi=Max('seq'))\n"
            "w = A.objects.values('details__worker').distinct().count()\n"
            "print(a['n'], a['lo'], a['hi'], w)",
        )
        n, lo, hi, workers = map(int, stats.stdout.strip().splitlines()[-1].split())
        assert (n, lo, hi, workers) == (WORKERS * PER_WORKER, 1, WORKERS * PER_WORKER, WORKERS)
