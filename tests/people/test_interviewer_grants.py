"""Naming a testimony's interviewers lets them reveal a High-protection witness: so only
someone who may reveal the witness already logs a testimony of them."""

import pytest
from django.core.exceptions import PermissionDenied, ValidationError
from django.urls import reverse
from django.utils import timezone

from casefiles.access import INVESTIGATOR_GROUP, Role
from casefiles.models import AuditEntry
from people import models, services
from people.models import Identity, Person
from people.protection import reveal_refusal
from tests.factories import MembershipFactory, UserFactory

pytestmark = pytest.mark.django_db

NAME = "سامر الحلبي"


@pytest.fixture
def colleague(cast):
    """An investigator of the case who neither registered nor interviewed the witness."""
    user = UserFactory(username="colleague", groups=[INVESTIGATOR_GROUP])
    MembershipFactory(user=user, case=cast.case, role=Role.INVESTIGATOR)
    return user


def _witness(cast, level):
    return services.register_person(
        actor=cast.investigator,
        case=cast.case,
        role="witness",
        identity=Identity(name_ar=NAME),
        protection_level=level,
    )


def _post(client, cast, witness, interviewers):
    return client.post(
        reverse("people:testimony_create", args=[cast.case.reference]),
        {
            "witness": witness.code,
            "taken_at": "2026-11-30T10:00",
            "language": "ar",
            "mode": "in_person",
            "text": "I was held in branch 215.",
            "interviewers": [u.pk for u in interviewers],
        },
    )


def _log(actor, cast, witness, interviewers):
    return services.create_testimony(
        actor=actor,
        case=cast.case,
        witness=witness,
        text="I was held in branch 215.",
        taken_at=timezone.now(),
        language="ar",
        mode="in_person",
        interviewers=interviewers,
    )


def _reveal(cast, user, person):
    return services.reveal_identity(
        actor=user, case=cast.case, person=person, reason="checking the spelling for court"
    )


def test_a_refused_investigator_cannot_name_themselves_interviewer_to_reveal(
    client, cast, colleague
):
    witness = _witness(cast, Person.Protection.HIGH)
    client.force_login(colleague)
    response = _post(client, cast, witness, [colleague])
    assert response.status_code == 400
    errors = response.context["form"].errors["witness"]
    assert "only the case lead, whoever registered this person and the interviewers" in errors[0]
    assert "may log a testimony of this person" in errors[0]
    with pytest.raises(PermissionDenied, match="High protection"):
        _log(colleague, cast, witness, [colleague])
    assert not models.Testimony.objects.exists()
    assert not AuditEntry.objects.filter(action="testimony.create").exists()
    with pytest.raises(PermissionDenied, match="High protection"):
        _reveal(cast, colleague, witness)


def test_the_lead_names_the_investigator_who_may_then_reveal_and_the_entry_says_so(
    client, cast, colleague
):
    witness = _witness(cast, Person.Protection.HIGH)
    client.force_login(cast.lead)
    response = _post(client, cast, witness, [colleague, cast.lead])
    testimony = models.Testimony.objects.get()
    assert response["Location"] == testimony.get_absolute_url()
    entry = AuditEntry.objects.get(action="testimony.create")
    assert entry.details["interviewers"] == ["colleague", "lead"]
    assert entry.details["witness"] == witness.code
    assert reveal_refusal(colleague, witness, cast.case) is None
    assert _reveal(cast, colleague, witness).name_ar == NAME
    # An interviewer now, the colleague may log a further interview of the witness.
    again = _log(colleague, cast, witness, [colleague])
    assert AuditEntry.objects.get(action="testimony.create", target_id=str(again.pk)).details[
        "interviewers"
    ] == ["colleague"]


def test_a_critical_witness_is_logged_only_by_the_lead_or_the_registrant(cast, colleague):
    witness = _witness(cast, Person.Protection.CRITICAL)
    with pytest.raises(PermissionDenied, match="Critical protection"):
        _log(colleague, cast, witness, [])
    assert not models.Testimony.objects.exists()
    _log(cast.investigator, cast, witness, [colleague])  # the registrant
    _log(cast.lead, cast, witness, [colleague])
    # Interviewers of a Critical witness get no reveal, and no right to log either.
    with pytest.raises(PermissionDenied, match="Critical protection"):
        _log(colleague, cast, witness, [])
    with pytest.raises(PermissionDenied, match="Critical protection"):
        _reveal(cast, colleague, witness)


def test_a_standard_witness_is_logged_by_any_investigator_of_the_case(cast, colleague):
    witness = _witness(cast, Person.Protection.STANDARD)
    testimony = _log(colleague, cast, witness, [])
    assert AuditEntry.objects.get(action="testimony.create").details["interviewers"] == []
    assert testimony.created_by == colleague


def test_interviewers_must_be_members_of_the_case(cast):
    witness = _witness(cast, Person.Protection.HIGH)
    with pytest.raises(ValidationError):
        _log(cast.lead, cast, witness, [cast.outsider])
    assert not models.Testimony.objects.exists()


def test_the_person_page_says_who_may_log_a_testimony_instead_of_offering_it(
    client, cast, colleague
):
    witness = _witness(cast, Person.Protection.HIGH)
    create = reverse("people:testimony_create", args=[cast.case.reference])
    client.force_login(colleague)
    html = client.get(witness.get_absolute_url()).content.decode()
    assert create not in html
    assert "may log a testimony of this person" in html
    client.force_login(cast.lead)
    assert create in client.get(witness.get_absolute_url()).content.decode()
