"""An investigator draws a rectangle on a photograph with the pointer and makes a redacted
copy of it, in headless Chromium against the demo server."""

import re

from tests.browser.test_flows import _sign_in, page, pytestmark, server  # noqa: F401


def test_an_investigator_drags_a_rectangle_and_makes_a_redacted_copy(page):  # noqa: F811
    _sign_in(page, "investigator")
    page.wait_for_url("**/cases/")
    page.click("text=DEMO-2014-001")
    page.click("main >> text=Evidence")
    page.locator("ul.gallery li.tile:not(.graphic) a").first.click()
    page.click("text=Redacted copies")
    page.wait_for_function(
        "() => { const i = document.querySelector('[data-redact] img');"
        " return i && i.complete && i.naturalWidth > 0; }"
    )
    box = page.locator("[data-redact] img").bounding_box()
    page.mouse.move(box["x"] + 20, box["y"] + 20)
    page.mouse.down()
    page.mouse.move(box["x"] + 120, box["y"] + 90, steps=5)
    page.mouse.up()
    drawn = page.locator("textarea[name='regions']").input_value()
    assert re.fullmatch(r"\d+, \d+, \d+, \d+", drawn), drawn
    left, top, width, height = (int(n) for n in drawn.split(", "))
    assert left > 0 and top > 0 and width > 50 and height > 30
    page.fill("textarea[name='reason']", "A face in the background.")
    page.click("button:has-text('Make a redacted copy')")
    page.wait_for_selector("ul.redactions li")
    assert "A face in the background." in page.locator("ul.redactions").inner_text()
