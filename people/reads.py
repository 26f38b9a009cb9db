"""The reads of people and testimony: what pages and the API call, never a manager.

Each function starts from ``visible_to(user)`` (case access) and applies the per-person
protection rule (``people.protection``) where it bears: a statement the reader may not
read, and evidence attached to it, are withheld. ``withheld`` is the one expression that
marks them in a list; lookups answer 404 for what the user may not see, as pages do.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.db.models import BooleanField, ExpressionWrapper, Q, QuerySet
from django.shortcuts import get_object_or_404

from casefiles import audit

from .models import CaseRole, Consent, Person, Relation, Testimony
from .protection import statement_refusal, withheld_testimonies

if TYPE_CHECKING:
    from casefiles.access import User
    from casefiles.models import Case


def withheld(user: User | None, case: Case | None = None, field: str = "testimony_id"):
    """True on the rows whose testimony (``field``, the path to its id) holds a statement
    ``user`` may not read, in ``case`` or across their cases: one subquery in the list's
    own query, whatever the number of rows. The one "withheld" expression of Athar."""
    return ExpressionWrapper(
        Q(**{f"{field}__in": withheld_testimonies(user, case)}), output_field=BooleanField()
    )


# People


def roles_in_case(user: User | None, case: Case) -> QuerySet:
    """The case's roles (a person in a role) ``user`` may see."""
    return CaseRole.objects.visible_to(user).filter(case=case)


def roles_of(user: User | None, people) -> QuerySet:
    """The roles of ``people`` in every case ``user`` may see."""
    return CaseRole.objects.visible_to(user).filter(person__in=people)


def people_in_case(user: User | None, case: Case) -> QuerySet:
    """The people with a role in ``case``, by their pseudonymous codes."""
    in_case = roles_in_case(user, case).values("person_id")
    return Person.objects.visible_to(user).filter(pk__in=in_case)


def people_by_pk(user: User | None, pks) -> dict:
    """The people ``user`` may see among ``pks``, by id."""
    return {p.pk: p for p in Person.objects.visible_to(user).filter(pk__in=pks)}


def get_person_for_user(user: User | None, case: Case, code: str) -> Person:
    """The person of ``case`` with ``code``; 404 for one ``user`` may not see."""
    person = get_object_or_404(people_in_case(user, case), code=code)
    if person.case_id == case.pk:
        person.case = case
    return person


def relations_of(user: User | None, case: Case, person: Person) -> QuerySet:
    return (
        Relation.objects.visible_to(user)
        .filter(Q(person=person) | Q(other=person), case=case)
        .select_related("person", "other")
    )


def consents_of(user: User | None, case: Case, person: Person) -> QuerySet[Consent]:
    return Consent.objects.visible_to(user).filter(person=person, case=case)


def get_consent_for_user(user: User | None, case: Case, person: Person, pk: int) -> Consent:
    """A consent given (not a withdrawal) by ``person`` in ``case``; 404 otherwise."""
    return get_object_or_404(consents_of(user, case, person).filter(kind="grant"), pk=pk)


# Testimony


def testimonies_listed_for(
    user: User | None, case: Case | None = None, *, mark_withheld: bool = False
) -> QuerySet:
    """Testimonies ``user`` may know of (that one exists, when, its status): for lists,
    which show no statement. ``mark_withheld`` annotates ``withheld`` on those whose
    statement is kept from them."""
    found = Testimony.objects.visible_to(user)
    if case is not None:
        found = found.filter(case=case)
    return found.annotate(withheld=withheld(user, case, "pk")) if mark_withheld else found


def testimonies_readable_by(user: User | None, case: Case | None = None) -> QuerySet:
    """Testimonies whose statement ``user`` may read: case access and the protection
    rule at once. The default for any new page or API operation that shows a statement."""
    found = Testimony.objects.visible_to(user)
    if case is not None:
        found = found.filter(case=case)
    return found.exclude(pk__in=withheld_testimonies(user, case))


def get_testimony_for_user(user: User | None, case: Case, pk: int) -> Testimony:
    """The testimony ``pk`` of ``case`` with its witness; 404 for one ``user`` may not
    know of. Whether its statement may be read is ``statement_refusal``'s answer (the
    page says so and records it: ``record_statement_withheld``)."""
    found = Testimony.objects.visible_to(user).filter(case=case).select_related("witness")
    testimony = get_object_or_404(found, pk=pk)
    testimony.case = case  # the one carrying the viewer's role: no query per can()
    return testimony


def testimony_in_case(user: User | None, case: Case, pk: int) -> Testimony | None:
    """The testimony ``pk`` of ``case`` ``user`` may know of, or None."""
    return Testimony.objects.visible_to(user).filter(case=case, pk=pk).first()


def statement_withheld(user: User | None, testimony: Testimony) -> str | None:
    """Why ``testimony``'s statement is kept from ``user`` (else None)."""
    return statement_refusal(user, testimony.witness, testimony.case)


def record_statement_withheld(user: User | None, testimony: Testimony) -> None:
    """The audit entry a refused read of a statement writes: the page was seen, not the
    text."""
    audit.record(user, "testimony.view", target=testimony, case=testimony.case, withheld=True)
