"""The gallery's place filter in headless Chromium, in English and in Arabic: a town of
the gazetteer chosen from the list shows the demo photos whose nearest GeoNames town is
one of its names, and another town of the same district shows none."""

import pytest

from tests.browser.test_flows import CHROMIUM, _browser_page, _sign_in, server  # noqa: F401
from tests.scratch_db import run_manage

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="Debian chromium is not installed")

CASE = "DEMO-2014-001"

# The demo camera card's positions lie nearest Dārayyā (GeoNames), in Rif Dimashq: the
# gazetteer gets that town, under a district, with GeoNames' spelling among its others,
# and a town of the same district where no photo was taken.
TOWNS = """
from places.models import ItemLocation, Kind, Place

rif = Place.objects.get(code="SY-RD")
district = Place.objects.create(
    code="SY-RD-DARAYYA", kind=Kind.DISTRICT, parent=rif, name_en="Darayya District",
    name_ar="منطقة داريا",
)
Place.objects.create(
    code="SY-RD-DARAYYA-T", kind=Kind.TOWN, parent=district, name_en="Darayya",
    name_ar="داريا", alt_names=["Daraya", "Dārayyā"],
)
Place.objects.create(
    code="SY-RD-SAHNAYA", kind=Kind.TOWN, parent=district, name_en="Sahnaya",
    name_ar="صحنايا",
)
print(ItemLocation.objects.filter(town_key="darayya").count())
"""


@pytest.fixture(scope="module")
def darayya(server):  # noqa: F811
    """How many photos intake placed nearest Dārayyā."""
    return int(run_manage(server.env, "shell", "-c", TOWNS).stdout.split()[-1])


@pytest.mark.parametrize(
    ("language", "town", "empty_town"),
    [
        ("en", "Darayya (Darayya District)", "Sahnaya (Darayya District)"),
        ("ar", "داريا (منطقة داريا)", "صحنايا (منطقة داريا)"),
    ],
)
def test_a_town_chosen_in_the_gallery_filter_shows_its_photos(
    server,  # noqa: F811
    darayya,
    language,
    town,
    empty_town,
):
    assert darayya > 0
    with _browser_page(server.url) as page:
        _sign_in(page, "lawyer")
        page.wait_for_url("**/cases/")
        page.context.add_cookies(
            [{"name": "django_language", "value": language, "url": server.url}]
        )
        page.goto(f"/cases/{CASE}/evidence/")
        assert page.locator("html").get_attribute("dir") == ("rtl" if language == "ar" else "ltr")

        page.select_option("#id_place", label=town)
        page.click("form.filters button[type=submit]")
        page.wait_for_url("**place=*")
        assert page.locator("h1 .count").inner_text().strip() == str(darayya)
        assert page.locator("ul.gallery li.tile").count() > 0
        assert page.locator("#id_place option:checked").inner_text() == town  # kept

        page.select_option("#id_place", label=empty_town)
        page.click("form.filters button[type=submit]")
        page.wait_for_selector("ul.gallery li.empty")
        assert page.locator("ul.gallery li.tile").count() == 0
        assert page.locator("#id_place option:checked").inner_text() == empty_town
