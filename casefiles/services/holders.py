"""Who holds whom: the admins who may hold an account's password or second factor
(they created, enrolled or recovered it), read from the audit log (docs/decisions/0005)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.contrib.auth import get_user_model
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


def one_person_refusal(first: Account | int | None, second: Account | int | None) -> str | None:
    """Why ``first`` and ``second`` (accounts, or their ids) count as one person to a
    four-eyes rule, or None.

    They are one when they are the same account, when either holds the other (created,
    enrolled or recovered it: ``holds``), or when one admin holds both and no other admin
    is there to have stood between that admin and either account (fewer than two admins,
    decision 0022): that admin could play both parts. One query, two when a shared
    holder is found.
    """
    a = first if first is None or isinstance(first, int) else first.pk
    b = second if second is None or isinstance(second, int) else second.pk
    if a is None or b is None:
        return None
    if a == b:
        return str(_("The same person cannot take both steps: a second person does."))
    meta = get_user_model()._meta
    rows = AuditEntry.objects.filter(
        actor__isnull=False,
        action__in=_TAKES_HOLD_OF_ACCOUNT,
        target_type=f"{meta.app_label}.{meta.model_name}",
        target_id__in=[str(a), str(b)],
    ).values_list("target_id", "actor_id")
    held: dict[str, set[int]] = {str(a): set(), str(b): set()}
    for target_id, actor_id in rows:
        held[target_id].add(actor_id)
    of_first, of_second = held[str(a)], held[str(b)]
    if b in of_first or a in of_second:
        return str(
            _(
                "One of these two accounts was created, enrolled or recovered by the other: "
                "to the four-eyes rule they are one person. A second person does this step."
            )
        )
    for admin_id in sorted(of_first & of_second):
        others = access.system_admins().exclude(pk__in=[admin_id, a, b])
        if not others.exists():
            return str(
                _(
                    "Both accounts were created, enrolled or recovered by the same admin, and "
                    "this installation has no second admin: to the four-eyes rule they are "
                    "one person. The step waits until a second admin is added (README, "
                    "section Two admins)."
                )
            )
    return None


def only_admin(actor: Account, user: Account | None = None) -> bool:
    """No admin but ``actor`` (and the account concerned) could approve: a step that
    needs a second admin then waits; it is never done on one admin's word."""
    exclude = [actor.pk] + ([user.pk] if user is not None else [])
    return not access.system_admins().exclude(pk__in=exclude).exists()
