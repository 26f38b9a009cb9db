"""What a new user's first walk through the demo found, in headless Chromium, in English
and in Arabic: tick boxes and radio buttons beside their labels, not above them; the
timeline's axis labels apart; the timeline and the map free of axe-core violations; the
evidence matrix and a person's tables usable on a phone (390 px), words kept whole."""

import pytest

from tests.browser.accessibility import violations
from tests.browser.test_flows import CHROMIUM, _browser_page, _sign_in, server  # noqa: F401

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="Debian chromium is not installed")

CASE = "DEMO-2014-001"
LANGUAGES = ("en", "ar")


@pytest.fixture(scope="module")
def lead(server):  # noqa: F811
    with _browser_page(server.url) as page:
        _sign_in(page, "lead")
        page.wait_for_url("**/cases/")
        yield page


def _in(page, server, language):  # noqa: F811
    page.context.add_cookies([{"name": "django_language", "value": language, "url": server.url}])


# Each visible tick box or radio button and its label's text: the box must share the
# label's line (their boxes overlap from top to bottom), not sit above it.
ABOVE = """(selector) => [...document.querySelectorAll(selector)]
    .filter(input => input.offsetParent !== null)
    .map(input => {
        const label = input.closest('label') || document.querySelector(`label[for="${input.id}"]`);
        const walker = document.createTreeWalker(label, NodeFilter.SHOW_TEXT);
        const words = [];
        for (let node = walker.nextNode(); node; node = walker.nextNode()) {
            if (!node.data.trim()) continue;
            const range = document.createRange();
            range.selectNodeContents(node);
            words.push(...[...range.getClientRects()].filter(r => r.width > 0));
        }
        const box = input.getBoundingClientRect();
        const first = words[0];
        const beside = first && box.top < first.bottom && first.top < box.bottom;
        return beside ? null : `${input.name}=${input.value}: box ${Math.round(box.top)}-`
            + `${Math.round(box.bottom)}, label ${first && Math.round(first.top)}`;
    })
    .filter(Boolean)"""


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize(
    ("url", "selector"),
    [
        (f"/cases/{CASE}/review/", "fieldset.bulk input:is([type=radio], [type=checkbox])"),
        (f"/cases/{CASE}/timeline/", "form.filters input[type=checkbox]"),
    ],
)
def test_tick_boxes_and_radio_buttons_sit_beside_their_labels(
    server,  # noqa: F811
    lead,
    language,
    url,
    selector,
):
    _in(lead, server, language)
    for width in (390, 1280):
        lead.set_viewport_size({"width": width, "height": 900})
        lead.goto(url)
        assert lead.locator(selector).count() >= 2
        assert lead.evaluate(ABOVE, selector) == [], (url, language, width)


OVERLAPS = """() => {
    const boxes = [...document.querySelectorAll('svg.timeline text.tick-label')]
        .map(t => [t.textContent, t.getBoundingClientRect()]);
    const out = [];
    boxes.forEach(([a, p], i) => boxes.slice(i + 1).forEach(([b, q]) => {
        if (p.left < q.right && q.left < p.right && p.top < q.bottom && q.top < p.bottom)
            out.push(`${a} and ${b}`);
    }));
    return [boxes.length, out];
}"""
# Every lane's name is drawn inside the picture, not cut off at its edge.
CLIPPED = """() => {
    const svg = document.querySelector('svg.timeline').getBoundingClientRect();
    return [...document.querySelectorAll('svg.timeline text.lane')]
        .filter(t => { const r = t.getBoundingClientRect();
                       return r.left < svg.left - 1 || r.right > svg.right + 1; })
        .map(t => t.textContent);
}"""


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_timeline_axis_labels_never_overlap(server, lead, language):  # noqa: F811
    _in(lead, server, language)
    for width in (390, 1280):
        lead.set_viewport_size({"width": width, "height": 900})
        lead.goto(f"/cases/{CASE}/timeline/")
        count, overlapping = lead.evaluate(OVERLAPS)
        assert count >= 4
        assert overlapping == [], (language, width)
        assert lead.evaluate(CLIPPED) == [], (language, width)


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_timeline_and_the_map_have_no_accessibility_violation(
    server,  # noqa: F811
    lead,
    language,
):
    _in(lead, server, language)
    lead.set_viewport_size({"width": 1280, "height": 900})
    found = []
    for url in (f"/cases/{CASE}/timeline/", f"/cases/{CASE}/map/"):
        lead.goto(url)
        assert lead.locator("svg a.mark").count() >= 3
        found += violations(lead, ("minor", "moderate", "serious", "critical"))
    assert found == []


# Words a table cell breaks inside, on two lines (a word over 24 letters, a hash or a
# file name, may break).
MID_WORD = """() => {
    const broken = [];
    for (const cell of document.querySelectorAll('main table :is(td, th)')) {
        const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
        for (let node = walker.nextNode(); node; node = walker.nextNode()) {
            for (const m of node.data.matchAll(/\\S+/g)) {
                if (m[0].length > 24) continue;
                const r = document.createRange();
                r.setStart(node, m.index);
                r.setEnd(node, m.index + m[0].length);
                const lines = new Set([...r.getClientRects()].filter(b => b.width > 0)
                    .map(b => Math.round(b.top)));
                if (lines.size > 1) broken.push(m[0]);
            }
        }
    }
    return broken;
}"""
# The matrix's box scrolls sideways, within itself, to its last column.
LAST_COLUMN = """() => {
    const box = document.querySelector('.table-scroll:has(table.matrix)');
    const cell = box.querySelector('tbody tr:not(.crime) > :last-child');
    cell.scrollIntoView({inline: 'nearest', block: 'nearest'});
    const b = box.getBoundingClientRect(), c = cell.getBoundingClientRect();
    return {scrolls: box.scrollWidth > box.clientWidth,
            page: document.documentElement.scrollWidth - window.innerWidth,
            seen: c.left >= b.left - 1 && c.right <= b.right + 1
                  && c.left >= 0 && c.right <= window.innerWidth};
}"""


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_matrix_and_a_persons_tables_on_a_phone(server, lead, language):  # noqa: F811
    _in(lead, server, language)
    lead.set_viewport_size({"width": 390, "height": 900})
    lead.goto(f"/cases/{CASE}/matrix/")
    assert lead.evaluate(LAST_COLUMN) == {"scrolls": True, "page": 0, "seen": True}
    assert lead.evaluate(MID_WORD) == []
    for person in ("W-0001", "V-0001"):
        lead.goto(f"/cases/{CASE}/people/{person}/")
        assert lead.locator("main table").count() >= 1
        assert lead.evaluate(MID_WORD) == [], person
    lead.goto(f"/cases/{CASE}/people/")
    assert lead.evaluate(MID_WORD) == []
