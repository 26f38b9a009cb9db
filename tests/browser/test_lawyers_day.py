"""A lawyer's day in headless Chromium, in English and in Arabic (right to left): filter
the gallery, open a graphic photograph and unblur it, assess it, link it to a legal
element, submit it; a second person approves it and confirms the link; the evidence
matrix counts it. axe-core finds no serious or critical violation on the gallery, the
item, the matrix and the review pages."""

import pytest

from tests.browser.accessibility import violations
from tests.browser.test_flows import CHROMIUM, _browser_page, _sign_in, server  # noqa: F401

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="Debian chromium is not installed")

CASE = "DEMO-2014-001"
# One photograph per language (the server is shared): neither reviewed in the demo.
PHOTO = {"en": "EV-000002", "ar": "EV-000003"}
ELEMENT = "RS-7-1-k.1"  # other inhumane acts: great suffering by an inhumane act


def _as(server, username, language):  # noqa: F811
    page_cm = _browser_page(server.url)
    page = page_cm.__enter__()
    _sign_in(page, username)
    page.wait_for_url("**/cases/")
    page.context.add_cookies([{"name": "django_language", "value": language, "url": server.url}])
    return page_cm, page


def _accessible(page, seen):
    seen.extend(violations(page))


@pytest.mark.parametrize("language", ["en", "ar"])
def test_a_lawyer_assesses_links_and_submits_and_a_second_person_approves(
    server,  # noqa: F811
    language,
):
    photo = PHOTO[language]
    item_url = f"/cases/{CASE}/evidence/{photo}/"
    found = []
    lawyer_cm, page = _as(server, "lawyer", language)
    try:
        # The gallery, filtered to photographs.
        page.goto(f"/cases/{CASE}/evidence/?kind=photo")
        assert page.locator("html").get_attribute("dir") == ("rtl" if language == "ar" else "ltr")
        _accessible(page, found)
        # Graphic: blurred in the gallery, a warning and no picture on its page.
        tile = page.locator(f"li.tile:has(a[href='{item_url}'])")
        assert tile.locator(".graphic-label").count() == 1
        page.click(f"a[href='{item_url}']")
        page.wait_for_url(f"**{item_url}")
        _accessible(page, found)
        assert page.locator(".graphic-warning").count() == 1
        assert page.locator("figure.viewer img").count() == 0
        page.click(".graphic-warning button[type=submit]")
        page.wait_for_url(f"**{item_url}**")
        assert page.locator("figure.viewer img").count() == 1  # shown after the click

        # Assess it (Admiralty grades), with the form opened from its summary.
        page.click("#assessments summary")
        page.select_option("#assessments select[name=reliability]", "B")
        page.select_option("#assessments select[name=credibility]", "2")
        page.select_option("#assessments select[name=consistency]", "same")
        page.select_option("#assessments select[name=geolocation]", "unknown")
        page.fill("#assessments textarea[name=rationale]", "Framing matches the series.")
        page.click("#assessments button[type=submit]")
        page.wait_for_url(f"**{item_url}#assessments")
        assert "B2" in page.locator("#assessments table").inner_text()

        # Link it to an element of a crime.
        page.click("#elements summary")
        page.select_option("#elements select[name=element]", ELEMENT)
        page.select_option("#elements select[name=stance]", "supports")
        page.fill("#elements textarea[name=proposition]", "Marks of beating on the back.")
        page.click("#elements button[type=submit]")
        page.wait_for_url(f"**{item_url}#elements")
        assert ELEMENT in page.locator("#elements").inner_text()

        # Submit it for review: the one step open to the lawyer now.
        page.check("#review input[name=to_status][value=submitted]")
        page.click("#review button[type=submit]")
        page.wait_for_url(f"**{item_url}#review")
        assert page.locator("#review .review-status.submitted").count() == 1
        assert page.locator("#review input[value=approved]").count() == 0  # four eyes
    finally:
        lawyer_cm.__exit__(None, None, None)

    lead_cm, page = _as(server, "lead", language)
    try:
        page.goto(item_url)
        page.check("#review input[name=to_status][value=approved]")
        page.click("#review button[type=submit]")
        page.wait_for_url(f"**{item_url}#review")
        assert page.locator("#review .review-status.approved").count() == 1
        page.click("#elements form[action$='/confirm/'] button")
        page.wait_for_url(f"**{item_url}#elements")
        _accessible(page, found)

        # The matrix counts the confirmed link: the element is no longer a gap.
        page.goto(f"/cases/{CASE}/matrix/")
        _accessible(page, found)
        row = page.locator("tr", has=page.locator(f"code:text-is('{ELEMENT}')"))
        assert row.get_attribute("class") != "gap"
        reviewed = row.locator(f"a[href*='{ELEMENT}/?stance=supports&reviewed=1']")
        assert int(reviewed.inner_text()) >= 1  # the other language's run may share the server
        reviewed.click()
        page.wait_for_url(f"**/matrix/{ELEMENT}/**")
        assert photo in page.locator("ul.links").inner_text()
        _accessible(page, found)
    finally:
        lead_cm.__exit__(None, None, None)
    assert found == []


@pytest.mark.parametrize("language", ["en", "ar"])
def test_the_gallery_and_the_item_page_work_from_the_keyboard(server, language):  # noqa: F811
    cm, page = _as(server, "lawyer", language)
    try:
        page.goto(f"/cases/{CASE}/evidence/?kind=photo")
        tiles = page.locator("[data-keys='gallery'] li.tile > a")
        page.keyboard.press("j")
        page.keyboard.press("j")
        assert page.evaluate("document.activeElement.getAttribute('href')") == (
            tiles.nth(1).get_attribute("href")
        )
        page.keyboard.press("k")
        forward = "ArrowLeft" if language == "ar" else "ArrowRight"  # reading order
        for _ in range(4):  # to the fifth photograph: one the other test leaves unreviewed
            page.keyboard.press(forward)
        fifth = tiles.nth(4).get_attribute("href")
        assert page.evaluate("document.activeElement.getAttribute('href')") == fifth
        page.keyboard.press("Enter")
        page.wait_for_url(f"**{fifth}")
        page.keyboard.press("n")
        page.wait_for_url(lambda url: not url.endswith(fifth))
        assert page.locator("a[rel='prev']").get_attribute("href") == fifth
        page.keyboard.press("p")
        page.wait_for_url(f"**{fifth}")
        page.keyboard.press("r")
        assert page.evaluate("document.activeElement.name") == "to_status"
        page.keyboard.press("Escape")
        page.evaluate("document.activeElement.blur()")
        page.keyboard.press("g")
        page.wait_for_url(f"**/cases/{CASE}/evidence/")
    finally:
        cm.__exit__(None, None, None)


def test_the_bulk_form_shows_only_the_chosen_actions_fields(server):  # noqa: F811
    """No action chosen at first, so none of the actions' fields; each action shows its
    own (CSS :has(), no script)."""
    page_cm, page = _as(server, "lawyer", "en")
    try:
        page.goto(f"/cases/{CASE}/review/")
        fields = {
            name: page.locator(f"#bulk-{name}")
            for name in ("reviewer", "tag", "sensitivity", "element", "proposition")
        }
        assert page.locator("#bulk-action").input_value() == ""
        assert not any(field.is_visible() for field in fields.values())
        shown = {"assign": {"reviewer"}, "tag_add": {"tag"}, "link": {"element", "proposition"}}
        for action, names in shown.items():
            page.select_option("#bulk-action", action)
            assert {n for n, field in fields.items() if field.is_visible()} == names
        page.select_option("#bulk-action", "submit")
        assert not any(field.is_visible() for field in fields.values())
    finally:
        page_cm.__exit__(None, None, None)
