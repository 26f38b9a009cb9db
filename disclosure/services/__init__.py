"""Writes to disclosure packages, each in its own durable transaction with its audit entry.

- ``packages``: requesting a package, approving (four eyes), refusing, withdrawing;
- ``building``: building the bag, as a task or from the command line.
"""

from .packages import approve_package, refuse_package, request_package, withdraw_package

__all__ = ["approve_package", "refuse_package", "request_package", "withdraw_package"]
