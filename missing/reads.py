"""The reads of the missing: what pages and the API call, never a manager. Each starts
from ``visible_to`` (case access); a lookup answers 404 for what the user may not see.
Whether a profile's protected fields may be opened is the services' rule
(``missing.services.missing``), asked before any is shown."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.db.models import QuerySet
from django.shortcuts import get_object_or_404

from people.models import CaseRole, Person, RoleKind

from .models import Profile, Session

if TYPE_CHECKING:
    from casefiles.access import User
    from casefiles.models import Case


def get_person_for_user(user: User | None, case: Case, code: str) -> Person:
    """The person of ``case`` with ``code``; 404 otherwise."""
    in_case = CaseRole.objects.filter(case=case).values("person_id")
    return get_object_or_404(Person.objects.visible_to(user).filter(pk__in=in_case), code=code)


def profile_of(user: User | None, case: Case, person: Person) -> Profile | None:
    """The person's antemortem profile in ``case``, if any (the person's status is its)."""
    profile = (
        Profile.objects.visible_to(user)
        .filter(case=case, person=person)
        .select_related("last_seen_place", "facility")
        .first()
    )
    if profile is not None:
        profile.person = person
    return profile


def profiles_in(user: User | None, case: Case) -> list[Profile]:
    return list(
        Profile.objects.visible_to(user)
        .filter(case=case)
        .select_related("person", "last_seen_place")
        .order_by("person__code")
    )


def victims_without_profile(user: User | None, case: Case) -> list[Person]:
    victims = (
        CaseRole.objects.filter(case=case, role=RoleKind.VICTIM)
        .exclude(person__antemortem_profile__isnull=False)
        .values("person_id")
    )
    return list(Person.objects.visible_to(user).filter(pk__in=victims).order_by("code"))


def others_in_case(case: Case, person: Person) -> QuerySet:
    """The people of ``case`` but ``person`` (a family member a session may name): for a
    case the caller reached through ``get_case_for_user``."""
    in_case = CaseRole.objects.filter(case=case).exclude(person=person).values("person_id")
    return Person.objects.filter(pk__in=in_case).order_by("code")


def get_session_for_user(user: User | None, case: Case, pk: int) -> Session:
    found = (
        Session.objects.visible_to(user)
        .filter(case=case)
        .select_related("profile__person", "family_member", "facility")
    )
    return get_object_or_404(found, pk=pk)
