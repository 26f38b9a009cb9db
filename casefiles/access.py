"""The one access policy of Athar.

Every read of case data goes through ``visible_to(user)`` on a model's manager, and every
permission question through ``can(user, action, obj)``. Non-members must not learn that a
case exists: views turn a refusal into 404 via ``get_case_for_user``.

A system admin manages memberships and reads the audit log, but sees no case content
unless they are a member of the case themselves (least privilege).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import models
from django.db.models import Q
from django.http import Http404, HttpRequest
from django.utils.translation import gettext_lazy as _

# The roles, their actions and the membership conditions live below the models
# (``casefiles.roles``); they are named here too, as the policy's own words.
from .models import Case, Membership
from .roles import (
    ADMIN_ACTIONS,
    ADMIN_GROUP,
    INVESTIGATOR_GROUP,
    LAWYER_GROUP,
    ROLE_ACTIONS,
    ROLE_GROUPS,
    SYSTEM_GROUPS,
    Action,
    Role,
    active_membership_q,
    case_ids_with_role,
    is_active_account,
    is_system_admin,
    led_case_ids,
    visible_case_ids,
)

if TYPE_CHECKING:
    from django.contrib.auth.models import User as Account

    from .roles import User as User

__all__ = [
    "ADMIN_ACTIONS",
    "ADMIN_GROUP",
    "INVESTIGATOR_GROUP",
    "LAWYER_GROUP",
    "ROLE_ACTIONS",
    "ROLE_GROUPS",
    "SYSTEM_GROUPS",
    "Action",
    "Role",
    "account_of",
    "active_membership_q",
    "can",
    "case_for_access_request",
    "case_ids_with_role",
    "cases_for_access_management",
    "check_role_allowed",
    "get_case_for_access_management",
    "get_case_for_user",
    "is_active_account",
    "is_system_admin",
    "led_case_ids",
    "request_is_system_admin",
    "role_in",
    "signed_in_with_security_key",
    "system_admins",
    "visible_case_ids",
]

_is_active_user = is_active_account


def account_of(request: HttpRequest) -> Account:
    """The signed-in account behind a request: every page but sign-in needs one (the
    middleware sends anyone else to sign in), so none here is a refusal, not a crash."""
    if not is_active_account(request.user):
        raise PermissionDenied
    return request.user


def request_is_system_admin(request: HttpRequest) -> bool:
    """``is_system_admin`` for the user behind ``request``, asked once per request: the
    header and an item page's panels each need it."""
    known = getattr(request, "_athar_system_admin", None)
    if known is None:
        known = request._athar_system_admin = is_system_admin(request.user)  # type: ignore[attr-defined]
    return known


def system_admins():
    """Every active system admin, by the rule ``is_system_admin`` applies to one user."""
    from django.contrib.auth import get_user_model

    admins = get_user_model().objects.filter(is_active=True)
    return admins.filter(Q(is_superuser=True) | Q(groups__name=ADMIN_GROUP)).distinct()


def case_for_access_request(reference: str) -> Case | None:
    """The case a request names, to attach the request to it; never shown to the asker.

    The one read of a case outside ``visible_to``: whoever asks learns nothing from
    it, because the answer to a request is the same whether the case exists or not.
    """
    return Case.objects.filter(reference=reference.strip().upper()).first()


def role_in(user: User | None, case: Case) -> str | None:
    """The user's role in the case now, or None."""
    if not _is_active_user(user):
        return None
    if getattr(case, "viewer_id", None) == user.pk:  # annotated by get_case_for_user
        return case.viewer_role  # type: ignore[attr-defined]  # its annotation
    return (
        Membership.objects.filter(active_membership_q(), user=user, case=case)
        .values_list("role", flat=True)
        .first()
    )


def _case_of(obj: Any) -> Case | None:
    if obj is None or isinstance(obj, Case):
        return obj
    return getattr(obj, "case", None)


def signed_in_with_security_key(user: User | None) -> bool:
    """Did this request's session pass its second factor with a security key?

    ``otp_device`` is set on ``request.user`` by django-otp's middleware; a user object
    fetched any other way has none, and so does not count as signed in with a key.
    """
    from django_otp_webauthn.models import WebAuthnCredential

    return isinstance(getattr(user, "otp_device", None), WebAuthnCredential)


def can(user: User | None, action: str, obj: Any = None) -> bool:
    """May ``user`` do ``action`` on ``obj`` (a case, a case-owned object, or None)?"""
    if not _is_active_user(user):
        return False
    if (
        action == Action.REVEAL_IDENTITY
        and settings.ATHAR_REVEAL_NEEDS_SECURITY_KEY
        and not signed_in_with_security_key(user)
    ):
        return False
    if action in ADMIN_ACTIONS and is_system_admin(user):
        return True
    case = _case_of(obj)
    if case is None:
        return False
    role = role_in(user, case)
    return role is not None and action in ROLE_ACTIONS[role]


def get_case_for_user(user: User | None, reference: str, action: str = Action.VIEW_CASE) -> Case:
    """The case with this reference if ``user`` may do ``action`` on it; 404 otherwise.

    A refusal is a 404, never a 403, so that outsiders cannot probe which cases exist.
    """
    if not _is_active_user(user):
        raise Http404  # nobody signed in sees no case, as visible_to would say
    role = Membership.objects.filter(
        active_membership_q(), user=user, case=models.OuterRef("pk")
    ).values("role")[:1]
    case = (
        Case.objects.visible_to(user)
        .filter(reference=reference)
        .annotate(viewer_role=models.Subquery(role))
        .first()
    )
    if case is None:
        raise Http404
    case.viewer_id = user.pk
    if not can(user, action, case):
        raise Http404
    return case


def check_role_allowed(user: Account, role: str) -> None:
    """Raise ValidationError unless ``user`` may be given ``role`` in a case."""
    if not user.is_active:
        raise ValidationError(_("An inactive account cannot be given access to a case."))
    needed = ROLE_GROUPS[role]
    if needed and not user.groups.filter(name__in=needed).exists():
        raise ValidationError(
            _("The role “%(role)s” needs an account in the group %(groups)s."),
            params={"role": Role(role).label, "groups": " / ".join(sorted(needed))},
        )


def cases_for_access_management(user: User | None) -> models.QuerySet:
    """The cases whose access ``user`` manages: every case for a system admin (to be
    shown by reference and title only, never their content), those they lead for a lead.
    """
    if is_system_admin(user):
        return Case.objects.all()
    return Case.objects.filter(pk__in=led_case_ids(user))


def get_case_for_access_management(user: User | None, reference: str) -> Case:
    """The case whose access ``user`` may manage (see ``cases_for_access_management``);
    404 otherwise, as for a case that does not exist."""
    case = cases_for_access_management(user).filter(reference=reference).first()
    if case is None:
        raise Http404
    return case
