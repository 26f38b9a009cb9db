"""A victim has one status (decision 0021): the person's. Changed through a family
identification, it shows on the people list; changed on the person's page, the profile's
history keeps the change; the people list, the person page, the profile and the session
page all say the same."""

import re

import pytest
from django.urls import reverse

from casefiles.models import AuditEntry
from missing.models import StatusChange
from people.models import Person

from .conftest import identify_first

pytestmark = pytest.mark.django_db


def _status_shown(html: str, element_id: str) -> str:
    found = re.search(rf'id="{element_id}" data-status="([a-z]*)">([^<]*)<', html)
    assert found, f"no #{element_id} on the page"
    return found.group(2).strip()


def _row_of(html: str, code: str) -> str:
    found = re.search(rf"<tr>(?:(?!</tr>).)*>{code}</a>(?:(?!</tr>).)*</tr>", html, re.S)
    assert found, f"{code} is not listed"
    return found.group(0)


def test_a_status_changed_by_an_identification_shows_on_the_people_list(client, cast, missing):
    people = reverse("people:people_list", args=[cast.case.reference])
    client.force_login(cast.observer)
    assert "<td>Missing</td>" in _row_of(client.get(people).content.decode(), missing.victim.code)

    identify_first(cast, missing)

    row = _row_of(client.get(people).content.decode(), missing.victim.code)
    assert "<td>Identified</td>" in row and "Missing" not in row
    # The filter offers the new value, and finds the victim by it.
    page = client.get(people, {"victim_status": "identified"})
    assert '<option value="identified" selected>Identified</option>' in page.content.decode()
    assert [r.person.code for r in page.context["page"]] == [missing.victim.code]


def test_every_page_shows_the_same_status(client, cast, missing):
    session, _ = identify_first(cast, missing, status="deceased")
    client.force_login(cast.lead)
    ref, code = cast.case.reference, missing.victim.code
    shown = {
        "person": _status_shown(
            client.get(reverse("people:person_detail", args=[ref, code])).content.decode(),
            "victim-status",
        ),
        "profile": _status_shown(
            client.get(reverse("missing:profile", args=[ref, code])).content.decode(),
            "missing-status",
        ),
        "session": _status_shown(
            client.get(reverse("missing:session", args=[ref, session.pk])).content.decode(),
            "victim-status",
        ),
    }
    assert shown == {"person": "Deceased", "profile": "Deceased", "session": "Deceased"}
    with_arabic = client.get(
        reverse("missing:profile", args=[ref, code]), HTTP_ACCEPT_LANGUAGE="ar"
    )
    assert _status_shown(with_arabic.content.decode(), "missing-status") == "متوفّى"


def test_a_change_on_the_person_page_is_kept_in_the_profile_history(client, cast, missing):
    client.force_login(cast.investigator)
    url = reverse("people:person_status", args=[cast.case.reference, missing.victim.code])
    done = client.post(url, {"victim_status": "detained", "reason": "Seen in Saydnaya"})
    assert done.status_code == 302
    assert Person.objects.get(pk=missing.victim.pk).victim_status == "detained"
    changes = StatusChange.objects.filter(profile=missing.profile)
    assert list(changes.values_list("old", "new", "reason", "changed_by")) == [
        ("", "missing", "", cast.investigator.pk),
        ("missing", "detained", "Seen in Saydnaya", cast.investigator.pk),
    ]
    assert AuditEntry.objects.filter(action="people.victim_status").last().details["new"] == (
        "detained"
    )
    # The same status again: nothing more written.
    assert client.post(url, {"victim_status": "detained"}).status_code == 302
    assert changes.count() == 2
    profile = client.get(
        reverse("missing:profile", args=[cast.case.reference, missing.victim.code])
    )
    assert "Seen in Saydnaya" in profile.content.decode()


def test_a_profile_keeps_a_status(client, cast, missing):
    client.force_login(cast.investigator)
    url = reverse("people:person_status", args=[cast.case.reference, missing.victim.code])
    refused = client.post(url, {"victim_status": "", "reason": "not known"})
    assert refused.status_code == 400
    assert "needs a status" in refused.content.decode()
    assert 'value="not known"' in refused.content.decode()
    assert Person.objects.get(pk=missing.victim.pk).victim_status == "missing"
    assert StatusChange.objects.filter(profile=missing.profile).count() == 1
    bad = client.post(url, {"victim_status": "gone"})
    assert bad.status_code == 400
    assert Person.objects.get(pk=missing.victim.pk).victim_status == "missing"


def test_a_victim_without_a_profile_changes_status_without_history(client, cast):
    from tests.factories import register_person

    victim = register_person(cast.case, cast.investigator, role="victim")
    client.force_login(cast.investigator)
    url = reverse("people:person_status", args=[cast.case.reference, victim.code])
    assert client.post(url, {"victim_status": "released"}).status_code == 302
    assert Person.objects.get(pk=victim.pk).victim_status == "released"
    assert not StatusChange.objects.exists()
    # An observer may not change it.
    client.force_login(cast.observer)
    assert client.post(url, {"victim_status": "missing"}).status_code in (403, 404)
    assert Person.objects.get(pk=victim.pk).victim_status == "released"
