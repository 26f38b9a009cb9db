"""A person's protection level narrows who may reveal their identity: need to know."""

import pytest
from django.core.exceptions import PermissionDenied
from django.urls import reverse
from django.utils import timezone

from casefiles.access import INVESTIGATOR_GROUP, Role
from casefiles.models import AuditEntry
from people import services
from people.models import Person
from tests.factories import MembershipFactory, UserFactory

pytestmark = pytest.mark.django_db

NAME = "سامر الحلبي"


@pytest.fixture
def colleague(cast):
    """An investigator of the same case who neither registered nor interviewed anyone."""
    user = UserFactory(username="colleague", groups=[INVESTIGATOR_GROUP])
    MembershipFactory(user=user, case=cast.case, role=Role.INVESTIGATOR)
    return user


def _register(cast, level):
    return services.register_person(
        actor=cast.investigator,
        case=cast.case,
        role="witness",
        identity=services.Identity(name_ar=NAME),
        protection_level=level,
    )


def _reveal(cast, user, person):
    return services.reveal_identity(
        actor=user, case=cast.case, person=person, reason="checking the spelling for court"
    )


def _reveals(person):
    return AuditEntry.objects.filter(action="people.reveal_identity", target_id=str(person.pk))


def test_a_standard_identity_is_revealed_to_every_investigator_of_the_case(cast, colleague):
    person = _register(cast, Person.Protection.STANDARD)
    assert _reveal(cast, colleague, person).name_ar == NAME


def test_a_critical_identity_is_revealed_only_to_the_lead_and_whoever_registered_it(
    cast, colleague
):
    person = _register(cast, Person.Protection.CRITICAL)
    with pytest.raises(PermissionDenied, match="Critical protection"):
        _reveal(cast, colleague, person)
    assert not _reveals(person).exists()
    assert _reveal(cast, cast.lead, person).name_ar == NAME
    assert _reveal(cast, cast.investigator, person).name_ar == NAME
    assert _reveals(person).count() == 2


def test_a_high_identity_is_revealed_to_the_interviewers_of_the_persons_testimony(cast, colleague):
    person = _register(cast, Person.Protection.HIGH)
    with pytest.raises(PermissionDenied, match="High protection"):
        _reveal(cast, colleague, person)
    services.create_testimony(
        actor=cast.investigator,
        case=cast.case,
        witness=person,
        text="I was held in branch 215.",
        taken_at=timezone.now(),
        language="ar",
        mode="in_person",
        interviewers=[colleague],
    )
    assert _reveal(cast, colleague, person).name_ar == NAME


def test_the_person_page_says_why_and_the_reveal_is_refused_and_audited(client, cast, colleague):
    person = _register(cast, Person.Protection.CRITICAL)
    client.force_login(colleague)
    page = client.get(person.get_absolute_url())
    assert page.status_code == 200
    assert page.context["reveal_form"] is None
    assert b"Critical protection" in page.content
    reveal_url = reverse("people:person_reveal", args=[cast.case.reference, person.code])
    assert reveal_url.encode() not in page.content

    response = client.post(reveal_url, {"reason": "checking the spelling for court"})
    assert response.status_code == 403
    assert NAME.encode() not in response.content
    assert response.context["identity"] is None
    assert not _reveals(person).exists()
    refused = AuditEntry.objects.get(action="people.reveal_refused")
    assert (refused.actor, refused.target_id) == (colleague, str(person.pk))

    client.force_login(cast.lead)
    response = client.post(reveal_url, {"reason": "checking the spelling for court"})
    assert response.status_code == 200
    assert NAME in response.content.decode()


def test_a_name_lookup_does_not_confirm_a_protected_person_to_others(client, cast, colleague):
    person = _register(cast, Person.Protection.CRITICAL)
    url = reverse("people:people_list", args=[cast.case.reference])
    client.force_login(colleague)
    response = client.post(url, {"name": NAME})
    assert response.context["matches"] == []
    entry = AuditEntry.objects.get(action="people.name_lookup", actor=colleague)
    assert entry.details == {"matches": [], "withheld": 1}

    client.force_login(cast.lead)
    assert client.post(url, {"name": NAME}).context["matches"] == [person]


def test_only_who_may_reveal_a_protected_person_gives_them_a_role_in_another_case(
    cast, colleague, other_case
):
    """Otherwise the lead of another case, also an investigator of this one, could add a
    Critical witness of this case to their own and reveal them there."""
    from people.models import CaseRole

    person = _register(cast, Person.Protection.CRITICAL)
    MembershipFactory(user=colleague, case=other_case, role=Role.LEAD)
    with pytest.raises(PermissionDenied, match="Critical protection"):
        services.add_case_role(actor=colleague, person=person, case=other_case, role="witness")
    assert not CaseRole.objects.filter(case=other_case).exists()

    # Whoever registered them decides to (a member of both cases).
    MembershipFactory(user=cast.investigator, case=other_case, role=Role.INVESTIGATOR)
    services.add_case_role(actor=cast.investigator, person=person, case=other_case, role="witness")
    assert CaseRole.objects.filter(case=other_case, person=person).exists()
    # Once there, that case's people record their further roles in it.
    services.add_case_role(actor=colleague, person=person, case=other_case, role="victim")

    # A standard person needs no such right: colleagues in both cases link them.
    plain = _register(cast, Person.Protection.STANDARD)
    services.add_case_role(actor=colleague, person=plain, case=other_case, role="witness")
