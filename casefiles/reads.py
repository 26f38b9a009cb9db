"""The reads of the core: cases, memberships, access requests, the audit log.

Pages (and the API) call these, never a manager: each starts from the access policy
(``visible_to``, ``manageable_by``, ``decidable_by``), so what a page lists is what the
policy lets the user see. Lookups answer 404 (``get_case_for_user`` and the like) for
what the user may not see. The apps above have their own reads modules beside their
services: ``evidence.reads``, ``people.reads``, ``legal.reads``... (docs/reads.md).
"""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING

from django.db.models import OuterRef, QuerySet, Subquery
from django.utils import timezone

from . import access
from .access import active_membership_q
from .models import AccessRequest, AuditCheckpoint, AuditEntry, Case, GrantRequest, Membership
from .querysets import MembershipQuerySet

if TYPE_CHECKING:
    from django.contrib.auth.models import User as Account

    from .access import User


# Cases


def cases_with_role(user: Account) -> list[Case]:
    """The cases ``user`` is a member of, each with ``my_role_label``: one query."""
    my_role = Membership.objects.filter(
        active_membership_q(), user=user, case=OuterRef("pk")
    ).values("role")[:1]
    cases = list(Case.objects.visible_to(user).annotate(my_role=Subquery(my_role)))
    for case in cases:
        case.my_role_label = Membership.Role(case.my_role).label
    return cases


def has_cases(user: User | None) -> bool:
    return Case.objects.visible_to(user).exists()


def readable_case_ids(user: User | None) -> set[int]:
    """The ids of the cases whose content ``user`` may read (a member's)."""
    return set(Case.objects.visible_to(user).values_list("pk", flat=True))


def cases_by_reference(user: User | None) -> dict[str, Case]:
    """The cases ``user`` is a member of, by reference, in order."""
    return {c.reference: c for c in Case.objects.visible_to(user).order_by("reference")}


# Memberships


def members_of(user: User | None, case: Case) -> QuerySet:
    """The members in force of ``case`` (for whoever may see them: ``Action.VIEW_MEMBERS``)."""
    return (
        Membership.objects.visible_to(user)
        .active()
        .filter(case=case)
        .select_related("user", "granted_by")
        .order_by("role", "user__username")
    )


def no_members() -> QuerySet:
    return Membership.objects.none()


def active_memberships() -> QuerySet:
    """Memberships in force, of any case: for a subquery bound to a case already found."""
    return Membership.objects.active()


def manageable_memberships(user: User | None) -> MembershipQuerySet:
    """The memberships ``user`` may grant, change or revoke."""
    return Membership.objects.manageable_by(user)


def get_manageable_membership(user: User | None, pk: int, **filters) -> Membership | None:
    return manageable_memberships(user).filter(pk=pk, **filters).first()


def expiring_memberships(user: User | None, days: int) -> QuerySet:
    """Memberships ``user`` manages whose access ends within ``days``, soonest first."""
    return (
        manageable_memberships(user)
        .active()
        .filter(expires_at__lte=timezone.now() + timedelta(days=days))
        .select_related("user", "case")
        .order_by("expires_at")
    )


# Access requests and grants waiting for a second person


def decidable_requests(user: User | None) -> QuerySet:
    """The access requests ``user`` may decide."""
    return AccessRequest.objects.decidable_by(user)


def pending_requests(user: User | None) -> QuerySet:
    return (
        decidable_requests(user)
        .filter(status=AccessRequest.Status.PENDING)
        .select_related("user", "case")
        .order_by("requested_at")
    )


def pending_grants(user: User | None, *, admin: bool) -> QuerySet:
    """Grants waiting for a second person that ``user`` may decide: every one for a
    system admin (``admin``, known to the caller), those of the cases they lead else."""
    grants = GrantRequest.objects.filter(outcome=GrantRequest.Outcome.PENDING)
    if not admin:
        grants = grants.filter(case__in=access.led_case_ids(user))
    return grants.select_related("user", "case", "requested_by").order_by("requested_at")


def pending_grants_in(case: Case) -> QuerySet:
    """The grants waiting in ``case``: for one whose access the caller manages
    (``get_case_for_access_management``)."""
    return (
        GrantRequest.objects.filter(case=case, outcome=GrantRequest.Outcome.PENDING)
        .select_related("user", "requested_by")
        .order_by("requested_at")
    )


def grant_request(pk: int) -> GrantRequest | None:
    """A grant waiting for a decision; whether ``user`` may decide it is
    ``services.can_decide_grant``'s answer, asked before anything of it is shown."""
    return GrantRequest.objects.select_related("case").filter(pk=pk).first()


# The audit log


def audit_entries(user: User | None) -> QuerySet:
    """The entries ``user`` may read: the whole log for a system admin, their cases' for
    a lead."""
    return AuditEntry.objects.visible_to(user)


def no_entries() -> QuerySet:
    return AuditEntry.objects.none()


def head_seq() -> int:
    """The number of the newest entry (0 for an empty log)."""
    return AuditEntry.objects.order_by("-seq").values_list("seq", flat=True).first() or 0


def latest_checkpoint() -> AuditCheckpoint | None:
    return AuditCheckpoint.objects.order_by("-size").first()
