"""The one writer of custody events: rows and the audit entry binding them, together.

Every custody event is written here, so each is bound into the audit chain (its entry
carries the row's content hash, see ``casefiles.bindings``) and ``verify_audit`` names
any later deleted or altered, or any written some other way.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from django.db import transaction

from casefiles import audit
from casefiles.bulk import insert_rows

from .models import CustodyEvent

if TYPE_CHECKING:
    from django.contrib.auth.models import User as Account

    from casefiles.models import Case


def record_custody(
    events: Sequence[Mapping[str, Any]],
    /,
    *,
    actor: Account | None,
    action: str,
    target: Any = None,
    case: Case | None = None,
    **details: Any,
) -> list[int]:
    """Write ``events`` (dicts keyed by column: ``case_id``, ``item_id``, ``actor_id``,
    ``action``, ``at``, ...) and the audit entry ``action`` that binds them, in one
    transaction (the caller's, when it has one). Returns the events' primary keys.

    Call it as the last write of a service: the entry is its trace.
    """
    with transaction.atomic(savepoint=False):  # the caller's transaction, if any
        pks = insert_rows(CustodyEvent, events, returning=True) or []
        audit.record(actor, action, target=target, case=case, binds={CustodyEvent: pks}, **details)
    return pks
