import pytest
from django.urls import reverse
from django.utils import timezone

from casefiles.models import AuditEntry
from evidence.models import Identification
from people import services as people_services
from tests.evidence.helpers import take_in
from tests.evidence.images import jpeg_bytes
from tests.factories import CaseFactory, register_person

pytestmark = pytest.mark.django_db


@pytest.fixture
def scene(cast, tmp_path):
    batch = take_in(cast.case, cast.investigator, {"body.jpg": jpeg_bytes(80)}, tmp_path / "m")
    mother = register_person(cast.case, cast.investigator, name_ar="أم يوسف")
    son = register_person(cast.case, cast.investigator, role="victim", name_ar="يوسف")
    return batch.items.get(), mother, son


def test_a_witness_identifies_a_victim_in_a_photo_shown_on_item_and_person(client, cast, scene):
    item, mother, son = scene
    client.force_login(cast.investigator)
    url = reverse("evidence:identification_create", args=[cast.case.reference, item.reference])
    response = client.post(
        url,
        {
            "witness": mother.pk,
            "identified": son.pk,
            "confidence": "certain",
            "method": "photo",
            "identified_on": "2014-03-02",
            "notes": "عرفته من الندبة",
        },
    )
    assert response.status_code == 302
    ident = Identification.objects.get()
    assert (ident.witness, ident.identified, ident.recorded_by) == (mother, son, cast.investigator)
    entry = AuditEntry.objects.get(action="evidence.identification")
    assert entry.details["identified"] == son.code
    item_page = client.get(item.get_absolute_url()).content.decode()
    assert mother.code in item_page and son.code in item_page and "Certain" in item_page
    for person in (mother, son):
        page = client.get(person.get_absolute_url()).content.decode()
        assert item.reference in page and "recognises" in page
    assert "يوسف" not in item_page  # pseudonyms only, never a name


def test_a_rejected_identification_keeps_what_was_typed(client, cast, scene):
    item, mother, _ = scene
    client.force_login(cast.investigator)
    url = reverse("evidence:identification_create", args=[cast.case.reference, item.reference])
    response = client.post(
        url,
        {
            "witness": mother.pk,
            "identified": mother.pk,
            "confidence": "probable",
            "method": "features",
            "identified_on": "2014-03-02",
            "notes": "the scar",
        },
    )
    assert response.status_code == 200
    html = response.content.decode()
    assert "identifies someone else" in html and "the scar" in html
    assert not Identification.objects.exists()


def test_people_of_another_case_cannot_be_named(client, cast, scene):
    item, mother, _ = scene
    elsewhere = CaseFactory()
    from tests.factories import MembershipFactory

    MembershipFactory(user=cast.investigator, case=elsewhere, role="investigator")
    stranger = register_person(elsewhere, cast.investigator, name_ar="غريب")
    client.force_login(cast.investigator)
    url = reverse("evidence:identification_create", args=[cast.case.reference, item.reference])
    response = client.post(
        url,
        {
            "witness": mother.pk,
            "identified": stranger.pk,
            "confidence": "possible",
            "method": "photo",
            "identified_on": "2014-03-02",
        },
    )
    assert response.status_code == 200 and not Identification.objects.exists()
    with pytest.raises(ValueError):
        from evidence.services import record_identification

        record_identification(
            actor=cast.investigator,
            item=item,
            witness=mother,
            identified=stranger,
            confidence="possible",
            method="photo",
            identified_on=timezone.localdate(),
        )


def test_a_lawyer_cannot_record_an_identification(client, cast, scene):
    item, _, _ = scene
    client.force_login(cast.lawyer)
    url = reverse("evidence:identification_create", args=[cast.case.reference, item.reference])
    assert client.get(url).status_code == 404


def test_a_recording_is_attached_to_a_testimony_and_linked_to_its_source(client, cast, scene):
    item, mother, _ = scene
    testimony = people_services.create_testimony(
        actor=cast.investigator,
        case=cast.case,
        witness=mother,
        text="شهادة",
        taken_at=timezone.now(),
        language="ar",
        mode="in_person",
    )
    client.force_login(cast.investigator)
    url = reverse("evidence:item_edit", args=[cast.case.reference, item.reference])
    response = client.post(
        url,
        {"title": "Recording", "source_person": mother.pk, "testimony": testimony.pk, "tags": ""},
    )
    assert response.status_code == 302
    item.refresh_from_db()
    assert (item.source_person, item.testimony) == (mother, testimony)
    page = client.get(testimony.get_absolute_url()).content.decode()
    assert item.reference in page
    assert item.reference in client.get(mother.get_absolute_url()).content.decode()
    entry = AuditEntry.objects.get(action="evidence.update")
    assert entry.details["changes"]["source_person"] == ["", mother.code]
