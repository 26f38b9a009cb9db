"""The case map: country outlines shipped with the app, governorates as labelled points,
incidents at their places and photos by nearest town drawn as SVG on the server, each
mark a link to its record or to the gallery filtered to it, in either language;
outsiders get 404; nothing in it points outside."""

import re
from datetime import date

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from casefiles.models import AuditEntry
from evidence import services as evidence_services
from incidents.models import Precision
from incidents.services import incidents as services
from people import services as people_services
from people.models import Identity
from people.protection import withheld_testimonies
from places.models import ItemLocation, Place

pytestmark = pytest.mark.django_db


@pytest.fixture
def placed(cast, story):
    return services.create_incident(
        actor=cast.investigator,
        case=cast.case,
        title_en="Arrest",
        precision=Precision.MONTH,
        starts_on=date(2012, 12, 1),
        place=Place.objects.get(code="SY-FAC-SAYDNAYA"),
    )


def _marks(html):
    return re.findall(r'<a href="([^"]+)" class="mark (\w+)"><title>([^<]+)</title>', html)


def _page(client, cast, language="en"):
    client.cookies["django_language"] = language
    response = client.get(reverse("incidents:case_map", args=[cast.case.reference]))
    assert response.status_code == 200
    return response.content.decode()


def test_every_mark_links_to_its_record_or_the_filtered_gallery(client, cast, story, placed):
    client.force_login(cast.lawyer)
    html = _page(client, cast)
    marks = _marks(html)
    by_kind = {}
    for href, kind, label in marks:
        by_kind.setdefault(kind, []).append((href, label))
    assert [href for href, _ in by_kind["incident"]] == [placed.get_absolute_url()]
    gallery = reverse("evidence:gallery", args=[cast.case.reference])
    assert len(by_kind["governorate"]) == 14
    damascus = Place.objects.get(code="SY-DI")
    assert (f"{gallery}?place={damascus.pk}", "Damascus") in by_kind["governorate"]
    location = ItemLocation.objects.get(item=story.item)
    [(town_href, town_label)] = by_kind["town"]
    assert town_href.startswith(f"{gallery}?town=") and location.town in town_label
    # the gallery link shows the photo
    assert story.item.reference in client.get(town_href.replace("&amp;", "&")).content.decode()
    assert ">Damascus</text>" in html and 'direction="ltr"' in html
    assert AuditEntry.objects.filter(action="incident.map").latest("seq").details["marks"] == len(
        marks
    )


def test_the_map_reads_right_to_left_in_arabic(client, cast, story, placed):
    client.force_login(cast.lawyer)
    html = _page(client, cast, "ar")
    assert 'dir="rtl"' in html and 'direction="rtl"' in html
    assert "خريطة القضية" in html and ">دمشق</text>" in html
    point = re.search(r'<circle cx="([0-9.]+)"[^>]*/><text x="([0-9.]+)"[^>]*>حلب<', html)
    assert point and float(point[2]) < float(point[1])  # the label starts left of its point
    english = _page(client, cast, "en")
    point = re.search(r'<circle cx="([0-9.]+)"[^>]*/><text x="([0-9.]+)"[^>]*>Aleppo<', english)
    assert point and float(point[2]) > float(point[1])
    # Damascus and Rif Dimashq are close: their labels go on either side, in both languages
    for page, names in ((english, ("Damascus", "Rif Dimashq")), (html, ("دمشق", "ريف دمشق"))):
        xs = [
            float(
                re.search(rf'<circle cx="([0-9.]+)"[^>]*/><text x="([0-9.]+)"[^>]*>{n}<', page)[2]
            )
            - float(
                re.search(rf'<circle cx="([0-9.]+)"[^>]*/><text x="([0-9.]+)"[^>]*>{n}<', page)[1]
            )
            for n in names
        ]
        assert xs == [-9, 9]


def test_nothing_in_the_map_points_outside(client, cast, story, placed):
    client.force_login(cast.lawyer)
    html = _page(client, cast)
    svg = html[html.index("<svg") : html.index("</svg>")]
    assert re.findall(r"https?://[^\s\"'<>]+", svg) == ["http://www.w3.org/2000/svg"]
    assert svg.count('class="country') == 8  # Syria and its neighbours, from Natural Earth
    assert not re.findall(r"(?:src|href)=\"(?:https?:)?//", html)


def test_the_case_page_links_to_the_map(client, cast):
    client.force_login(cast.lawyer)
    html = client.get(cast.case.get_absolute_url()).content.decode()
    assert reverse("incidents:case_map", args=[cast.case.reference]) in html


def test_outsiders_get_404(client, cast, placed):
    client.force_login(cast.outsider)
    assert client.get(reverse("incidents:case_map", args=[cast.case.reference])).status_code == 404


MAP_QUERIES = 15 + (1 if connection.vendor == "postgresql" else 0)


def test_the_map_costs_an_exact_number_of_queries(client, cast, story, placed):
    """The session, the user and their second factor, the case, the viewer's role for
    the rule on protected statements, photos per governorate and per facility, the
    places to show, the incidents with their places, the photo towns, the audit entry
    (savepoint, lock on PostgreSQL, head, row, release), the page's menu (admin, lead)."""
    client.force_login(cast.lawyer)
    url = reverse("incidents:case_map", args=[cast.case.reference])
    client.get(url)
    with CaptureQueriesContext(connection) as page:
        assert client.get(url).status_code == 200
    assert len(page.captured_queries) == MAP_QUERIES, [q["sql"] for q in page]


def test_photos_of_a_statement_the_viewer_may_not_read_are_left_out(client, cast, story):
    """A photo attached to a Critical witness's statement leaves the map for whoever may not
    read that statement, as it leaves the gallery."""
    witness = people_services.register_person(
        actor=cast.lead,
        case=cast.case,
        role="witness",
        identity=Identity(name_ar="هالة"),
        protection_level="critical",
    )
    statement = people_services.create_testimony(
        actor=cast.lead,
        case=cast.case,
        witness=witness,
        text="They took us to the branch at dawn.",
        taken_at=timezone.now(),
        language="en",
        mode="in_person",
        interviewers=[],
    )
    client.force_login(cast.investigator)
    assert [kind for _, kind, _ in _marks(_page(client, cast))].count("town") == 1
    evidence_services.update_item(
        actor=cast.lead, item=story.item, tags=[], title="Scan", description="", testimony=statement
    )
    assert {"pk": statement.pk} in list(withheld_testimonies(cast.investigator, cast.case))
    assert [kind for _, kind, _ in _marks(_page(client, cast))].count("town") == 0
