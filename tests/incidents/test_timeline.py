"""The case timeline: incidents, photo days, testimonies and hand-recorded custody events
drawn as SVG on the server, each mark a link to its record, filtered by kind, place and
person, right to left in Arabic; outsiders get 404."""

import re
from datetime import UTC, date, datetime, timedelta
from itertools import pairwise

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from casefiles.models import AuditEntry
from incidents.models import Precision
from incidents.services import incidents as services
from incidents.timeline import Axis
from people import services as people_services
from places.models import Place
from tests.evidence.factories import CustodyEventFactory, EvidenceItemFactory
from tests.html import attrs

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
        found = re.search(r'<rect x="([0-9.]+)" y="[0-9.]+" width="([0-9.]+)"', html)
        assert found, html[-3000:]
        return float(found[1]) + float(found[2]) / 2, html  # the span's middle

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


def test_a_day_of_sixty_custody_events_is_one_mark_with_its_count(client, cast, story):
    """A fixity sweep or a disclosure on the day of an intake batch writes an event per
    item: the day is one mark saying how many, opening the gallery of those items."""
    day = datetime(2024, 5, 2, 9, tzinfo=UTC)
    items = [EvidenceItemFactory(case=cast.case) for _ in range(60)]
    for item in items:
        CustodyEventFactory(item=item, actor=cast.lead, at=day)
    CustodyEventFactory(item=story.item, actor=cast.lead, at=datetime(2024, 5, 3, tzinfo=UTC))
    client.force_login(cast.lead)
    url = reverse("incidents:case_timeline", args=[cast.case.reference])
    html = client.get(url, {"kinds": "custody"}).content.decode()
    marks = _marks(html)
    assert len(marks) == 2  # the day of sixty, and the next day's one
    gallery = reverse("evidence:gallery", args=[cast.case.reference]) + "?custody_on=2024-05-02"
    assert (gallery.replace("&", "&amp;"), "60 custody events on 2024-05-02") in marks
    assert (
        story.item.get_absolute_url() + "#custody",
        f"{story.item.reference} · Stored · 2024-05-03",
    ) in marks
    assert 'class="count" direction="ltr">60</text>' in html
    # The mark's link lists those sixty items, and only them.
    listed = client.get(gallery)
    assert '<span class="count">60</span>' in listed.content.decode()
    assert story.item.get_absolute_url() not in attrs(listed, "href", "a")


def test_a_day_of_testimonies_is_one_mark_opening_that_days_testimonies(client, cast, story):
    day = timezone.now().date()
    people_services.create_testimony(
        actor=cast.investigator,
        case=cast.case,
        witness=story.witness,
        text="A second account.",
        taken_at=story.testimony.taken_at,
        language="en",
        mode="in_person",
    )
    client.force_login(cast.lead)
    url = reverse("incidents:case_timeline", args=[cast.case.reference])
    marks = _marks(client.get(url, {"kinds": "testimony"}).content.decode())
    listed = reverse("people:testimony_list", args=[cast.case.reference])
    assert marks == [
        (f"{listed}?taken_after={day}&amp;taken_before={day}", f"2 testimonies taken on {day}")
    ]


def _x(html, href_part):
    found = re.search(
        rf'<a href="[^"]*{re.escape(href_part)}[^"]*" class="mark"><title>[^<]*'
        r'</title><(?:circle cx|rect x)="([0-9.]+)"',
        html,
    )
    assert found, href_part
    return float(found[1])


def test_a_long_empty_stretch_is_cut_out_of_the_axis(client, cast, story, dated):
    """The incident (December 2012) and the photo (August 2013) keep the width between
    them though the statement and the custody event are dated today, years later: the
    empty years are one narrow cut, named for what it leaves out."""
    client.force_login(cast.lead)
    url = reverse("incidents:case_timeline", args=[cast.case.reference])
    html = client.get(url).content.decode()
    cuts = re.findall(r'<g class="cut"><title>([^<]+)</title>', html)
    assert cuts == [f"Nothing from 2013-09-05 to {timezone.now().date() - timedelta(days=15)}"]
    incident, photo = _x(html, dated.get_absolute_url()), _x(html, "taken_after=2013-08-21")
    assert photo - incident > 250  # of 790: without the cut, some 30
    assert _x(html, story.testimony.get_absolute_url()) - photo < 300
    # No tick is drawn in the cut: the labels run in order of date, none within the cut.
    (cut,) = (float(x) for x in re.findall(r'<g class="cut">.*?<text x="([0-9.]+)"', html))
    ticks = re.findall(r'<text x="([0-9.]+)"[^>]*class="tick-label"[^>]*>([0-9-]+)<', html)
    assert len(ticks) >= 5
    assert [label for _, label in ticks] == sorted(label for _, label in ticks)
    assert not any(abs(float(x) - cut) < 14 for x, _ in ticks)


@pytest.mark.parametrize("rtl", [False, True])
@pytest.mark.parametrize(
    "runs",
    [
        [(date(2013, 1, 1), date(2013, 2, 1))],
        [(date(2012, 11, 1), date(2014, 4, 30))],
        [(date(2011, 3, 1), date(2016, 1, 1))],
        [(date(1990, 1, 1), date(2026, 1, 1))],
        [(date(2012, 12, 1), date(2013, 1, 10)), (date(2026, 1, 1), date(2026, 2, 1))],
        [
            (date(2012, 1, 1), date(2014, 1, 10)),
            (date(2020, 6, 1), date(2021, 1, 1)),
            (date(2026, 1, 1), date(2026, 2, 1)),
        ],
    ],
)
def test_axis_labels_never_overlap(runs, rtl):
    """However long the span, the labels chosen are at least as far apart as the wider
    of two neighbours needs (the browser test measures them as drawn)."""
    ticks = Axis(runs, rtl=rtl).ticks()
    assert ticks
    for (a, left), (b, right) in pairwise(ticks):
        assert b - a >= 7.5 * (len(left) + len(right)) / 2 + 10, (left, right)


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
