"""Case roles, what each may do, and the conditions of a membership in force.

The bottom of the access policy: ``casefiles.models`` and ``casefiles.querysets`` build on
this module, and ``casefiles.access`` (``can``, ``get_case_for_user``) on all three, so
none of them imports ``access`` back. The membership model is reached through the app
registry, never imported: this module sits below the models that use its roles.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeGuard

from django.apps import apps
from django.db import models
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

if TYPE_CHECKING:
    from django.contrib.auth.models import AnonymousUser
    from django.contrib.auth.models import User as Account

    # Who asks: a signed-in account or the anonymous visitor.
    User = Account | AnonymousUser

ADMIN_GROUP = "Admin"
INVESTIGATOR_GROUP = "Investigator"
LAWYER_GROUP = "Lawyer"
SYSTEM_GROUPS = (INVESTIGATOR_GROUP, LAWYER_GROUP, ADMIN_GROUP)


class Role(models.TextChoices):
    LEAD = "lead", _("Lead")
    INVESTIGATOR = "investigator", _("Investigator")
    LAWYER = "lawyer", _("Lawyer")
    OBSERVER = "observer", _("Observer")


class Action:
    """Names of the things a user may do; the matrix below says who may."""

    VIEW_CASE = "case.view"
    # A case's details (title, status, sensitivity) are no case role's to change: the
    # Admin group changes them in the Django admin (its ``change_case`` permission).
    VIEW_MEMBERS = "case.view_members"  # who else has access, on the case's page
    MANAGE_MEMBERS = "case.manage_members"
    VIEW_CASE_AUDIT = "case.view_audit"
    ADD_EVIDENCE = "evidence.add"
    DOWNLOAD_ORIGINAL = "evidence.download"  # a copy leaves the server: not for observers
    RECORD_CUSTODY = "evidence.record_custody"
    REVIEW = "evidence.review"
    ADD_PEOPLE = "people.add"
    REVEAL_IDENTITY = "people.reveal_identity"
    ADD_TESTIMONY = "testimony.add"
    APPROVE = "review.approve"
    EXPORT = "disclosure.export"
    VIEW_AUDIT = "audit.view"  # the whole log: system admins only


_MEMBER_READ = {Action.VIEW_CASE, Action.VIEW_MEMBERS}

ROLE_ACTIONS: dict[str, frozenset[str]] = {
    Role.LEAD: frozenset(
        _MEMBER_READ
        | {
            Action.MANAGE_MEMBERS,
            Action.VIEW_CASE_AUDIT,
            Action.ADD_EVIDENCE,
            Action.DOWNLOAD_ORIGINAL,
            Action.RECORD_CUSTODY,
            Action.REVIEW,
            Action.ADD_PEOPLE,
            Action.REVEAL_IDENTITY,
            Action.ADD_TESTIMONY,
            Action.APPROVE,
            Action.EXPORT,
        }
    ),
    Role.INVESTIGATOR: frozenset(
        _MEMBER_READ
        | {
            Action.ADD_EVIDENCE,
            Action.DOWNLOAD_ORIGINAL,
            Action.RECORD_CUSTODY,
            Action.ADD_PEOPLE,
            Action.REVEAL_IDENTITY,
            Action.ADD_TESTIMONY,
        }
    ),
    Role.LAWYER: frozenset(
        _MEMBER_READ | {Action.DOWNLOAD_ORIGINAL, Action.REVIEW, Action.APPROVE, Action.EXPORT}
    ),
    Role.OBSERVER: frozenset(_MEMBER_READ),
}

# What a system admin may do without being a member: manage access, read the log.
ADMIN_ACTIONS = frozenset({Action.MANAGE_MEMBERS, Action.VIEW_AUDIT})

# Which system group a user needs before being given a case role.
ROLE_GROUPS: dict[str, frozenset[str]] = {
    Role.LEAD: frozenset({INVESTIGATOR_GROUP, LAWYER_GROUP}),
    Role.INVESTIGATOR: frozenset({INVESTIGATOR_GROUP}),
    Role.LAWYER: frozenset({LAWYER_GROUP}),
    Role.OBSERVER: frozenset(),
}


def is_active_account(user: User | None) -> TypeGuard[Account]:
    """A signed-in, active account (what every rule below starts from)."""
    return bool(user is not None and user.is_authenticated and user.is_active)


def is_system_admin(user: User | None) -> bool:
    if not is_active_account(user):
        return False
    return user.is_superuser or user.groups.filter(name=ADMIN_GROUP).exists()


def active_membership_q(prefix: str = "") -> Q:
    """Memberships in force now: not revoked and not expired."""
    now = timezone.now()
    return Q(**{f"{prefix}revoked_at__isnull": True}) & (
        Q(**{f"{prefix}expires_at__isnull": True}) | Q(**{f"{prefix}expires_at__gt": now})
    )


def _memberships() -> models.QuerySet:
    return apps.get_model("casefiles", "Membership")._default_manager.all()


def visible_case_ids(user: User | None) -> models.QuerySet:
    """A subquery of the ids of the cases ``user`` is a member of now."""
    if not is_active_account(user):
        return _memberships().none().values("case_id")
    return _memberships().filter(active_membership_q(), user=user).values("case_id")


def led_case_ids(user: User | None) -> models.QuerySet:
    """A subquery of the ids of the cases ``user`` leads now."""
    if not is_active_account(user):
        return _memberships().none().values("case_id")
    return _memberships().filter(active_membership_q(), user=user, role=Role.LEAD).values("case_id")


def case_ids_with_role(user: User | None, roles: frozenset[str] | set[str]) -> models.QuerySet:
    """A subquery of the ids of the cases where ``user`` holds one of ``roles`` now."""
    if not is_active_account(user):
        return _memberships().none().values("case_id")
    return (
        _memberships()
        .filter(active_membership_q(), user=user, role__in=sorted(roles))
        .values("case_id")
    )
