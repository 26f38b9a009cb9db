"""The core's contract for review: the statuses an evidence item or a testimony goes
through, and the one call an app makes when what was reviewed changes.

The review itself (the transition table, the decisions, who may take which step) lives
in ``legal``, above the apps whose records it reviews. Those apps store the current
status on their rows (so lists filter on it) but never choose it: only legal's services
move it. When an approved record's content changes, the app that changed it calls
``content_changed_within(actor, record, sha256)`` (the hash of the content now to be
reviewed) inside its write's transaction; legal, which
registered itself with ``when_content_changes`` from its ``AppConfig.ready()``, sends the
record back for review in that same transaction (``approved → submitted``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from django.db import models, transaction
from django.utils.translation import gettext_lazy as _

if TYPE_CHECKING:
    from django.contrib.auth.models import User as Account


class ReviewStatus(models.TextChoices):
    # Stored as "draft" since the first testimony: the review's "new".
    NEW = "draft", _("New")
    SUBMITTED = "submitted", _("Submitted")
    APPROVED = "approved", _("Approved")
    RETURNED = "returned", _("Returned")
    REJECTED = "rejected", _("Rejected")


Reopener = Callable[["Account", models.Model, str], None]
_reopeners: list[Reopener] = []


def when_content_changes(reopener: Reopener) -> None:
    """Call ``reopener(actor, record, sha256)`` whenever an approved record's content changes."""
    if reopener not in _reopeners:
        _reopeners.append(reopener)


def content_changed_within(actor: Account, record: models.Model, sha256: str) -> None:
    """An approved record's content changed: send it back for review. Only inside the
    transaction that changed it, so the change and the step back commit together."""
    if not transaction.get_connection().in_atomic_block:
        raise RuntimeError("content_changed_within runs inside the change's transaction")
    for reopen in _reopeners:
        reopen(actor, record, sha256)
