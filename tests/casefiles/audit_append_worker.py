"""Run by test_audit_concurrency in a separate process: append N entries to the chain."""

import os
import sys
import time
from pathlib import Path

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "athar.settings")

import django

django.setup()

from casefiles import audit  # noqa: E402


def main(worker: int, count: int, start_flag: str) -> None:
    deadline = time.monotonic() + 60
    while not Path(start_flag).exists():  # start together, for real contention
        if time.monotonic() > deadline:
            sys.exit("start flag never appeared")
        time.sleep(0.01)
    for i in range(count):
        audit.record(None, "test.append", worker=worker, i=i)


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]), sys.argv[3])
