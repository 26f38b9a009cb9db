"""What every people service checks first."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.core.exceptions import PermissionDenied

from casefiles.access import can
from casefiles.models import Case

if TYPE_CHECKING:
    from django.contrib.auth.models import User as Account


def _require(actor: Account, action: str, case: Case) -> None:
    # Views already answer 404 to users without the right; this keeps other callers honest.
    if not can(actor, action, case):
        raise PermissionDenied(action)
