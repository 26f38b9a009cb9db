"""Writes to disclosure packages, each in its own durable transaction with its audit entry.

- ``packages``: requesting a package, approving (four eyes), refusing, withdrawing;
- ``building``: building the bag, as a task or from the command line.
"""

from .building import BuildRefused, fail_build, run_build, start_build
from .packages import approve_package, refuse_package, request_package, withdraw_package

__all__ = [
    "BuildRefused",
    "approve_package",
    "fail_build",
    "refuse_package",
    "request_package",
    "run_build",
    "start_build",
    "withdraw_package",
]
