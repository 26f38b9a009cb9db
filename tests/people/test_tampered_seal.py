"""A sealed value moved to another row (without the key) does not open there: the reveal
answers a clear refusal, audits what was found, and the person's page warns."""

import pytest
from django.urls import reverse

from casefiles.models import AuditEntry
from people.models import Person
from tests.factories import register_person

pytestmark = pytest.mark.django_db

NAME_A, NAME_B = "سامر الحلبي", "ليلى حسن"


@pytest.fixture
def swapped(cast):
    a = register_person(cast.case, cast.lead, name_ar=NAME_A, name_latin="Samer al-Halabi")
    b = register_person(cast.case, cast.lead, name_ar=NAME_B, name_latin="Layla Hassan")
    a_ct, b_ct = (Person.objects.values_list("enc_name_ar", flat=True).get(pk=p.pk) for p in (a, b))
    Person.objects.filter(pk=a.pk).update(enc_name_ar=b_ct)  # as someone with the database
    Person.objects.filter(pk=b.pk).update(enc_name_ar=a_ct)  # but not the key would do
    return a, b


def test_a_swapped_ciphertext_is_refused_audited_and_warned_of(client, cast, swapped):
    a, _b = swapped
    client.force_login(cast.lead)
    url = reverse("people:person_reveal", args=[cast.case.reference, a.code])
    response = client.post(url, {"reason": "matching a photo"})
    assert response.status_code == 409
    text = response.content.decode()
    assert "failed its integrity check" in text
    assert NAME_A not in text and NAME_B not in text
    entry = AuditEntry.objects.get(action="people.reveal_failed")
    assert (entry.actor, entry.case, entry.target_id) == (cast.lead, cast.case, str(a.pk))
    assert entry.details["table"] == "people_person"
    assert entry.details["row"] == str(a.pk)
    assert entry.details["column"] == "enc_name_ar"
    assert entry.details["reason"] == "matching a photo"
    assert not AuditEntry.objects.filter(action="people.reveal_identity").exists()
    # The person's page warns, to everyone who sees it.
    client.force_login(cast.observer)
    page = client.get(a.get_absolute_url()).content.decode()
    assert "sealed identity of this person failed its integrity check" in page


def test_an_untouched_person_shows_no_warning(client, cast, swapped):
    _a, _b = swapped
    other = register_person(cast.case, cast.lead, name_ar="رامي صالح")
    client.force_login(cast.lead)
    page = client.get(other.get_absolute_url()).content.decode()
    assert "failed its integrity check" not in page
    url = reverse("people:person_reveal", args=[cast.case.reference, other.code])
    assert "رامي صالح" in client.post(url, {"reason": "matching a photo"}).content.decode()
