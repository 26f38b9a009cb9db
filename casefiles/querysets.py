"""Permission-aware querysets: every read of case data starts from ``visible_to(user)``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Self

from django.db import models

from . import roles

if TYPE_CHECKING:
    from .roles import User


class CaseQuerySet(models.QuerySet):
    def visible_to(self, user: User | None) -> CaseQuerySet:
        return self.filter(pk__in=roles.visible_case_ids(user))


class CaseScopedQuerySet(models.QuerySet):
    """Base for every model owned by a case; ``case_field`` names the path to it."""

    case_field = "case"

    def visible_to(self, user: User | None) -> Self:
        return self.filter(**{f"{self.case_field}__in": roles.visible_case_ids(user)})


class MembershipQuerySet(CaseScopedQuerySet):
    def active(self) -> MembershipQuerySet:
        return self.filter(roles.active_membership_q())

    def manageable_by(self, user: User | None) -> MembershipQuerySet:
        """Memberships ``user`` may grant, change or revoke: all for a system admin,
        those of the cases they lead for a lead, none otherwise."""
        if roles.is_system_admin(user):
            return self.all()
        if user is None or not user.is_authenticated or not user.is_active:
            return self.none()
        return self.filter(case__in=roles.led_case_ids(user))


class AppendOnly:
    """Refuses bulk changes; the database triggers refuse them too. Mixed into a
    queryset before its base (a plain mixin, so that the querysets of case-owned
    append-only rows have one queryset base: type checkers then know their manager)."""

    model: type[Any]

    def update(self, **kwargs: Any) -> int:
        raise TypeError(f"{self.model.__name__} is append-only: rows cannot be updated.")

    def delete(self) -> tuple[int, dict[str, int]]:
        raise TypeError(f"{self.model.__name__} is append-only: rows cannot be deleted.")

    def bulk_update(self, *args: Any, **kwargs: Any) -> int:
        raise TypeError(f"{self.model.__name__} is append-only: rows cannot be updated.")


class AppendOnlyQuerySet(AppendOnly, models.QuerySet):
    """Append-only rows."""


class AuditEntryQuerySet(AppendOnlyQuerySet):
    def visible_to(self, user: User | None) -> AuditEntryQuerySet:
        """System admins read the whole log; a case lead reads their case's entries."""
        if roles.is_system_admin(user):
            return self
        if user is None or not user.is_authenticated or not user.is_active:
            return self.none()
        return self.filter(case__in=roles.led_case_ids(user))


class AccessRequestQuerySet(CaseScopedQuerySet):
    def decidable_by(self, user: User | None) -> AccessRequestQuerySet:
        """Requests ``user`` may decide: all for a system admin, their cases' for a lead."""
        if roles.is_system_admin(user):
            return self.all()
        if user is None or not user.is_authenticated or not user.is_active:
            return self.none()
        return self.filter(case__in=roles.led_case_ids(user))
