"""The case timeline: incidents, photo days, testimonies and hand-recorded custody events
drawn as SVG on the server, each mark a link to its record, filtered by kind, place and
person, right to left in Arabic; outsiders get 404."""

import re
from datetime import date

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from casefiles.models import AuditEntry
from incidents.models import Precision
from incidents.services import incidents as services
from places.models import Place
from tests.evidence.factories import CustodyEventFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def dated(cast, story):
    incident = services.create_incident(
        actor=cast.investigator,
        case=cast.case,
        title_en="Arrest",
        precision=Precision.MONTH,
        starts_on=date(2012, 12, 1),
        place=Place.objects.get(code="SY-FAC-SAYDNAYA"),
    )
    services.add_act(
        actor=cast.investigator, incident=incident, victim=story.victim, act_type=story.arrest
    )
    CustodyEventFactory(item=story.item, actor=cast.lead)
    return incident


def _marks(html):
    return re.findall(r'<a href="([^"]+)" class="mark"><title>([^<]+)</title>', html)


def test_the_timeline_links_every_mark_to_its_record(client, cast, story, dated):
    client.force_login(cast.lawyer)
    url = reverse("incidents:case_timeline", args=[cast.case.reference])
    html = client.get(url).content.decode()
    assert "<svg" in html and 'direction="ltr"' in html
    hrefs = dict(_marks(html))
    assert dated.get_absolute_url() in hrefs
    assert story.testimony.get_absolute_url() in hrefs
    assert any("taken_after=2013-08-21" in h for h in hrefs)  # the photo's day
    assert story.item.get_absolute_url() + "#custody" in hrefs
    assert AuditEntry.objects.filter(action="incident.timeline").latest("seq").details[
        "marks"
    ] == len(hrefs)


def test_the_timeline_filters_by_kind_place_and_person(client, cast, story, dated):
    client.force_login(cast.lawyer)
    url = reverse("incidents:case_timeline", args=[cast.case.reference])

    def shown(**query):
        response = client.get(url, query)
        assert response.status_code == 200
        return [href for href, _ in _marks(response.content.decode())]

    assert shown(kinds="incident") == [dated.get_absolute_url()]
    assert set(shown(kinds=["testimony", "custody"])) == {
        story.testimony.get_absolute_url(),
        story.item.get_absolute_url() + "#custody",
    }
    rif = Place.objects.get(code="SY-RD").pk
    assert shown(kinds="incident", place=rif) == [dated.get_absolute_url()]
    assert shown(kinds="incident", place=Place.objects.get(code="SY-HL").pk) == []
    assert shown(person=story.victim.code) == [dated.get_absolute_url()]
    assert shown(person=story.witness.code) == [story.testimony.get_absolute_url()]
    assert client.get(url, {"kinds": "planets"}).status_code == 400


def test_the_timeline_runs_right_to_left_in_arabic(client, cast, story, dated):
    client.force_login(cast.lawyer)
    url = reverse("incidents:case_timeline", args=[cast.case.reference])

    def incident_x(language):
        client.cookies["django_language"] = language
        html = client.get(url, {"kinds": ["incident", "testimony"]}).content.decode()
        found = re.search(r'<rect x="([0-9.]+)"', html)
        assert found, html[-3000:]
        return float(found[1]), html

    ltr, _ = incident_x("en")
    rtl, arabic = incident_x("ar")
    assert 'direction="rtl"' in arabic and "الجدول الزمني" in arabic
    assert ltr < 480 < rtl  # the earlier mark is on the left in English, the right in Arabic


def test_outsiders_get_404(client, cast, dated):
    client.force_login(cast.outsider)
    assert (
        client.get(reverse("incidents:case_timeline", args=[cast.case.reference])).status_code
        == 404
    )


TIMELINE_QUERIES = 16 + (1 if connection.vendor == "postgresql" else 0)


def test_the_timeline_costs_an_exact_number_of_queries(client, cast, story, dated):
    """The session, the user and their second factor, the case, the place choices, each
    kind (incidents, photo days, testimonies, custody), the viewer's role for the rule on
    protected statements (photos and custody, once each), the audit entry (savepoint,
    head, row, release)."""
    client.force_login(cast.lawyer)
    url = reverse("incidents:case_timeline", args=[cast.case.reference])
    client.get(url)
    with CaptureQueriesContext(connection) as page:
        assert client.get(url).status_code == 200
    assert len(page.captured_queries) == TIMELINE_QUERIES, [q["sql"] for q in page]
