"""Writes to disclosure packages, each in its own durable transaction with its audit entry.

- ``packages``: requesting a package, approving (four eyes), refusing, withdrawing;
- ``building``: building the bag, as a task or from the command line;
- ``redactions``: redacted copies of a picture, for what may not go whole.
"""

from .building import BuildRefused, fail_build, run_build, start_build
from .packages import approve_package, refuse_package, request_package, withdraw_package
from .redactions import parse_regions, redact_item

__all__ = [
    "BuildRefused",
    "approve_package",
    "fail_build",
    "parse_regions",
    "redact_item",
    "refuse_package",
    "request_package",
    "run_build",
    "start_build",
    "withdraw_package",
]
