"""Searching from the header's box, in English and in Arabic (right to left): a word of the
demo statement typed with harakat finds the testimony, a witness's name in another
spelling finds the witness (for the lead, who may reveal him); each result opens. The
words searched are in no URL the browser opened (its history) and no ``Referer`` it sent
(decision 0024)."""

import re
import urllib.parse

import pytest

from tests.browser.test_flows import CHROMIUM, _browser_page, _sign_in, server  # noqa: F401

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="Debian chromium is not installed")

CASE = "DEMO-2014-001"


def _search(page, words: str) -> None:
    page.fill("#site-search-q", words)
    page.press("#site-search-q", "Enter")
    page.wait_for_url("**/search/?r=**")


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"\w+", text) if len(w) >= 3}


def _leaks(sent: list[tuple[str, str]], searched: set[str]) -> list[str]:
    """The URLs and Referers sent that hold a searched word, plain or percent-encoded."""
    forms = {f.lower() for w in searched for f in (w, urllib.parse.quote(w))}
    return [u for pair in sent for u in pair if any(f in u.lower() for f in forms)]


@pytest.mark.parametrize("language", ["en", "ar"])
def test_the_lead_searches_from_the_header_and_opens_the_results(server, language):  # noqa: F811
    with _browser_page(server.url) as page:
        sent: list[tuple[str, str]] = []
        page.on("request", lambda r: sent.append((r.url, r.headers.get("referer", ""))))
        _sign_in(page, "lead")
        page.wait_for_url("**/cases/")
        page.context.add_cookies(
            [{"name": "django_language", "value": language, "url": server.url}]
        )
        page.goto("/cases/")
        assert page.locator("html").get_attribute("dir") == ("rtl" if language == "ar" else "ltr")

        # Arabic with harakat: the statement has "المطار" and "حاجز" without them.
        _search(page, "حَاجِز المَطَار")
        group = page.locator("#results-testimony")
        assert group.count() == 1
        assert group.locator("mark").first.inner_text() in ("حاجز", "المطار")
        group.locator("li.hit a").first.click()
        page.wait_for_url(f"**/cases/{CASE}/testimonies/*/")
        assert "المطار" in page.content()

        # A Latin spelling other than the one registered ("Mazen Fouad al-Saadi").
        _search(page, "Mazin Fuad Saadi")
        people = page.locator("#results-person li.hit")
        assert people.count() == 1
        assert people.locator("a").first.inner_text() == "W-0001"
        people.locator("a").first.click()
        page.wait_for_url(f"**/cases/{CASE}/people/W-0001/")

        # The same name in Arabic script finds him too.
        _search(page, "مازن السعدي")
        assert page.locator("#results-person li.hit a").first.inner_text() == "W-0001"
        # Back to the results (history): shown again, from the token.
        page.locator("#results-person li.hit a").first.click()
        page.wait_for_url(f"**/cases/{CASE}/people/W-0001/")
        page.go_back()
        page.wait_for_url("**/search/?r=**")
        assert page.locator("#results-person li.hit a").first.inner_text() == "W-0001"

        searched = _words("حَاجِز المَطَار حاجز المطار Mazin Fuad Saadi مازن السعدي")
        assert sent and _leaks(sent, searched) == []
