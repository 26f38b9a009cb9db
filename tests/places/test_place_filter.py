"""A place chosen in the gallery's or the timeline's filter, of any kind, finds the
photos in it or anywhere within it (by what intake recorded of their GPS positions): a
country those of its governorates, a district those near its towns, a town those whose
nearest GeoNames town is one of its names, in its governorate; a governorate or
facility as the location names it. The same queries whatever the kind."""

import re
from datetime import date

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from places.models import Kind, Place
from tests.places.factories import ItemLocationFactory, PlaceFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def places(db):
    """Syria and two of its governorates (seeded), and in Rif Dimashq two districts with
    their towns; Lebanon, with a governorate and a town within the country only."""
    rif = Place.objects.get(code="SY-RD")
    douma = PlaceFactory(code="SY-RD-DOUMA", kind=Kind.DISTRICT, parent=rif, name_en="Douma")
    qatana = PlaceFactory(code="SY-RD-QATANA", kind=Kind.DISTRICT, parent=rif, name_en="Qatana")
    lebanon = PlaceFactory(code="LB", kind=Kind.COUNTRY, name_en="Lebanon", name_ar="لبنان")
    return {
        "country": Place.objects.get(code="SY"),
        "governorate": rif,
        "district": douma,
        "town": PlaceFactory(
            code="SY-RD-DOUMA-HARASTA",
            parent=douma,
            name_en="Harasta",
            name_ar="حرستا",
            alt_names=["Ḩarastā"],
        ),
        "facility": Place.objects.get(code="SY-FAC-HARASTA"),
        "town of the district": PlaceFactory(
            parent=douma, name_en="Douma", name_ar="دوما", alt_names=["Dūmā"]
        ),
        "town of the other district": PlaceFactory(
            parent=qatana, name_en="Qatana", name_ar="قطنا", alt_names=["Qaţanā"]
        ),
        "other country": lebanon,
        "its governorate": PlaceFactory(
            code="LB-BA", kind=Kind.GOVERNORATE, parent=lebanon, name_en="Beirut"
        ),
        "town within a country only": PlaceFactory(
            code="LB-ZAHLE", parent=lebanon, name_en="Zahle", name_ar="زحلة"
        ),
    }


@pytest.fixture
def photos(cast, places):
    """One photo a day, each placed as intake places it: its nearest GeoNames town (by
    key), the governorate GeoNames names, a seeded facility close by."""
    rif, aleppo = places["governorate"], Place.objects.get(code="SY-HL")

    def photo(day, town, governorate, facility=None):
        return ItemLocationFactory(
            case=cast.case,
            taken=date(2013, 1, day),
            town=town,
            town_key=town.lower(),
            governorate=governorate,
            facility=facility,
        ).item

    return {
        "harasta": photo(1, "Harasta", rif, places["facility"]),
        "douma": photo(2, "Duma", rif),
        "qatana": photo(3, "Qatana", rif),
        "aleppo": photo(4, "Aleppo", aleppo),
        # A town of the same name in another governorate.
        "harasta in aleppo": photo(5, "Harasta", aleppo),
        "beirut": photo(6, "Beirut", places["its governorate"]),
        "zahle": photo(7, "Zahle", None),  # GeoNames' division is no governorate here
    }


SYRIA = {"harasta", "douma", "qatana", "aleppo", "harasta in aleppo"}

# The place chosen -> the photos shown (every other photo is not).
FOUND = {
    "country": SYRIA,
    "governorate": {"harasta", "douma", "qatana"},
    "district": {"harasta", "douma"},
    "town": {"harasta"},
    "facility": {"harasta"},
    "town of the other district": {"qatana"},
    "other country": {"beirut"},
    "town within a country only": {"zahle"},
}


_DAY = re.compile(r"taken_after=2013-01-([0-9]{2})")


def _gallery(client, case, place):
    response = client.get(reverse("evidence:gallery", args=[case.reference]), {"place": place.pk})
    assert response.status_code == 200, response.content.decode()[:2000]
    return {item.reference for item in response.context["page"]}


def _timeline_days(client, case, place):
    url = reverse("incidents:case_timeline", args=[case.reference])
    response = client.get(url, {"kinds": "photo", "place": place.pk})
    assert response.status_code == 200, response.content.decode()[:2000]
    return {int(day) for day in _DAY.findall(response.content.decode())}


@pytest.mark.parametrize("level", sorted(FOUND))
def test_the_gallery_shows_the_photos_within_the_place_chosen(client, cast, places, photos, level):
    client.force_login(cast.lawyer)
    expected = {photos[name].reference for name in FOUND[level]}
    assert _gallery(client, cast.case, places[level]) == expected


@pytest.mark.parametrize("level", sorted(FOUND))
def test_the_timeline_shows_the_photos_within_the_place_chosen(client, cast, places, photos, level):
    client.force_login(cast.lawyer)
    days = {photos[name].provenance.taken_date.day for name in FOUND[level]}
    assert _timeline_days(client, cast.case, places[level]) == days


LEVELS = ["country", "governorate", "district", "town", "facility"]
CHAIN_LOCK = 1 if connection.vendor == "postgresql" else 0
# The gallery's (tests/evidence/test_query_counts.py) and the place chosen, read by the
# filter (1): the photos within it are a subquery of the page's, whatever its kind.
GALLERY_PLACE_QUERIES = 16 + CHAIN_LOCK
# The timeline's (tests/incidents/test_timeline.py) and the place chosen (1), without
# the testimonies and custody events, which a place does not filter (the two lanes, and
# the viewer's role for the rule on protected statements once: 3).
TIMELINE_PLACE_QUERIES = 14 + CHAIN_LOCK


@pytest.mark.parametrize("level", LEVELS)
def test_the_gallery_costs_the_same_queries_whatever_the_kind_of_place(
    client, cast, places, photos, level
):
    client.force_login(cast.lawyer)
    url = reverse("evidence:gallery", args=[cast.case.reference])
    client.get(url)
    with CaptureQueriesContext(connection) as page:
        assert client.get(url, {"place": places[level].pk}).status_code == 200
    assert len(page.captured_queries) == GALLERY_PLACE_QUERIES, [q["sql"] for q in page]


@pytest.mark.parametrize("level", LEVELS)
def test_the_timeline_costs_the_same_queries_whatever_the_kind_of_place(
    client, cast, places, photos, level
):
    client.force_login(cast.lawyer)
    url = reverse("incidents:case_timeline", args=[cast.case.reference])
    client.get(url)
    with CaptureQueriesContext(connection) as page:
        assert client.get(url, {"place": places[level].pk}).status_code == 200
    assert len(page.captured_queries) == TIMELINE_PLACE_QUERIES, [q["sql"] for q in page]
