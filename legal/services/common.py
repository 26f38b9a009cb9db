"""What every lawyer's write checks first."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.core.exceptions import PermissionDenied, ValidationError
from django.utils.translation import gettext as _

from casefiles.access import Action, can, is_system_admin
from casefiles.models import Case
from evidence.models import EvidenceItem
from people.models import Testimony
from people.protection import statement_refusal

if TYPE_CHECKING:
    from django.contrib.auth.models import User as Account

Reviewed = EvidenceItem | Testimony


def require_reviewer(actor: Account, case: Case, record: Reviewed | None = None) -> None:
    """A member who reviews (lawyer or lead), never a system admin, and for a testimony
    one who may read its statement."""
    if is_system_admin(actor):
        raise PermissionDenied(_("A system admin does not review case content."))
    if not can(actor, Action.REVIEW, case):
        raise PermissionDenied(_("Your role in this case does not allow this step."))
    if record is not None:
        if record.case_id != case.pk:
            raise ValidationError(_("That record is not in this case."))
        if isinstance(record, Testimony) and statement_refusal(actor, record.witness, case):
            raise PermissionDenied(_("You may not read this statement, so you may not review it."))


def record_fields(record: Reviewed) -> dict[str, Reviewed]:
    """The foreign key a row about ``record`` sets: ``item`` or ``testimony``."""
    return {"item": record} if isinstance(record, EvidenceItem) else {"testimony": record}
