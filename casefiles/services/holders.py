"""Who holds whom: the admins who may hold an account's password or second factor
(they created, enrolled or recovered it), read from the audit log (docs/decisions/0005)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.core.exceptions import ValidationError
from django.utils.translation import gettext as _

from .. import access
from ..models import (
    AuditEntry,
)

if TYPE_CHECKING:
    from django.contrib.auth.models import User as Account

# Actions by which an admin may hold an account's password or second factor: creating
# it (they chose its password), issuing its enrolment code, or approving its recovery
# (the recovery code, which stands in for the password, is handed to that admin).
_TAKES_HOLD_OF_ACCOUNT = (
    "user.create",
    "auth.enrolment_code_issue",
    "auth.recovery_code_issue",
)


def holders(user: Account):
    """The ids of every account that may hold ``user``'s password or second factor
    (created, enrolled or recovered it). Read from the audit log, which nobody can edit.
    The one answer to "who holds whom" (docs/decisions/0005)."""
    return AuditEntry.objects.filter(
        actor__isnull=False,
        action__in=_TAKES_HOLD_OF_ACCOUNT,
        target_type=f"{user._meta.app_label}.{user._meta.model_name}",
        target_id=str(user.pk),
    ).values("actor_id")


def holds(actor: Account, user: Account) -> bool:
    """Did ``actor`` create ``user``'s account, issue its enrolment code or approve its
    recovery? Then ``actor`` may sign in as ``user``: the two are one person to the rule."""
    if actor is None or user is None or actor.pk == user.pk:
        return False
    return holders(user).filter(actor_id=actor.pk).exists()


def held_by_another_admin(actor: Account, user: Account) -> bool:
    """Whether an admin other than ``actor`` (and ``user``) holds ``user``."""
    return (
        access.system_admins()
        .exclude(pk__in=[actor.pk, user.pk])
        .filter(pk__in=holders(user))
        .exists()
    )


def check_not_held(
    *, approver: Account, asker: Account | None = None, grantee: Account | None = None
) -> None:
    """Refuse an approval by an admin who holds the account it gives access to, or whom
    the asker (or that account) holds: one person would approve their own request."""
    if grantee is not None and holds(approver, grantee):
        raise ValidationError(
            _(
                "You created, enrolled or recovered this account: you cannot approve its "
                "access. Another admin decides."
            )
        )
    for other in (asker, grantee):
        if other is not None and holds(other, approver):
            raise ValidationError(
                _(
                    "Your account was created, enrolled or recovered by %(name)s: an account "
                    "they hold cannot approve their requests. Another admin decides."
                )
                % {"name": other.get_username()}
            )


def _sole_admin(actor: Account, user: Account) -> bool:
    """No other admin could approve: none but ``actor`` and the account concerned."""
    return not access.system_admins().exclude(pk__in=[actor.pk, user.pk]).exists()
