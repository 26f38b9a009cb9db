"""The demo's story, walked as the demo lead in headless Chromium, in English and Arabic:
the people of the case, a protected witness (revealed, with a reason), the missing victim,
the testimony with its two versions and the changes between them, consent, and the
photograph in which the mother recognised her son."""

import re

import pytest
from django.utils import translation

from evidence.models import Identification
from people import models as people_models  # its Test* classes: not collected by pytest
from people.models import ConsentScope, Person, RoleKind
from tests.browser.test_flows import CHROMIUM, _browser_page, _sign_in, server  # noqa: F401

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="Debian chromium is not installed")

CASE = "DEMO-2014-001"


def _labels(language: str) -> dict[str, str]:
    """The words the pages show, in ``language``, from the project's own catalogue."""
    with translation.override(language):
        return {
            "witness": str(RoleKind.WITNESS.label),
            "family": str(RoleKind.FAMILY.label),
            "victim": str(RoleKind.VICTIM.label),
            "standard": str(Person.Protection.STANDARD.label),
            "high": str(Person.Protection.HIGH.label),
            "critical": str(Person.Protection.CRITICAL.label),
            "missing": str(Person.VictimStatus.MISSING.label),
            "approved": str(people_models.Testimony.Status.APPROVED.label),
            "prosecution": str(ConsentScope.PROSECUTION.label),
            "publication": str(ConsentScope.PUBLICATION.label),
            "certain": str(Identification.Confidence.CERTAIN.label),
        }


def _row(page, code: str) -> str:
    return page.locator(
        "table.list tbody tr", has=page.locator(f"a.ref:text-is('{code}')")
    ).first.inner_text()


@pytest.mark.parametrize("language", ["en", "ar"])
def test_the_demo_lead_walks_the_story_of_the_demo_case(server, language):  # noqa: F811
    words = _labels(language)
    if language == "ar":
        assert words["high"] != "High"  # the catalogue is there: the pages are in Arabic
    with _browser_page(server.url) as page:
        _sign_in(page, "lead")
        page.wait_for_url("**/cases/")
        page.context.add_cookies(
            [{"name": "django_language", "value": language, "url": server.url}]
        )

        # The people: three witnesses at three levels of protection, and the missing victim.
        page.goto(f"/cases/{CASE}/people/")
        assert page.locator("html").get_attribute("lang") == language
        assert words["standard"] in _row(page, "W-0001")
        assert words["high"] in _row(page, "W-0002")
        assert words["critical"] in _row(page, "W-0003")
        victim_row = _row(page, "V-0001")
        assert words["victim"] in victim_row and words["missing"] in victim_row
        assert "2012-11-18" in victim_row

        # The mother: a high-protection witness and family member, her protection raised
        # with a reason, her consent given then partly withdrawn, her identification.
        page.click("a.ref:text-is('W-0002')")
        facts = page.locator("dl.facts").first.inner_text()
        assert words["witness"] in facts and words["family"] in facts and words["high"] in facts
        assert (
            "neighbours were questioned" in page.locator("section.protection-changes").inner_text()
        )
        consent = _section(page, "Consent", language)
        assert (
            "2014-04-02" in consent and "2014-06-01" in consent and words["publication"] in consent
        )
        identified = page.locator("ul.identifications").inner_text()
        assert "W-0002" in identified and "V-0001" in identified and words["certain"] in identified
        # Her identity, revealed for this page view with a reason (audited).
        page.fill(
            "form[action$='/reveal/'] [name=reason]", "Demo walk-through: checking the family link"
        )
        page.click("form[action$='/reveal/'] button[type=submit]")
        identity = page.locator("section.identity").inner_text()
        assert "نوال حسن العمر" in identity and "Nawal Hassan al-Omar" in identity

        # The victim: what is known of his disappearance, and where he was recognised.
        page.goto(f"/cases/{CASE}/people/V-0001/")
        facts = page.locator("dl.facts").first.inner_text()
        assert words["missing"] in facts and "2012-11-18" in facts
        assert "4417/000" not in facts and "Branch 000" not in facts  # sealed in his profile
        assert "W-0002" in page.locator("ul.identifications").inner_text()
        page.goto(f"/cases/{CASE}/missing/V-0001/")
        page.click("#reveal-profile")  # the profile's reveal (audited) shows them
        profile = page.locator("#antemortem").inner_text()
        assert "4417/000" in profile and "Branch 000" in profile
        page.goto(f"/cases/{CASE}/people/V-0001/")

        # The photograph: the identification on the item page.
        page.locator("ul.identifications a").first.click()
        page.wait_for_url(re.compile(r"/evidence/EV-\d+/$"))
        assert "mother recognised her son" in page.locator("h1").inner_text()
        identification = page.locator("ul.identifications").inner_text()
        assert "V-0001" in identification and words["certain"] in identification
        assert "NIKON D90" in page.locator("main").inner_text()

        # The testimony: Arabic, approved, two versions and what changed between them.
        page.goto(f"/cases/{CASE}/people/W-0001/")
        consent = page.locator("main").inner_text()
        assert "UN investigative mechanism" in consent and words["prosecution"] in consent
        page.locator("a[href*='/testimonies/']").first.click()
        page.wait_for_url(re.compile(r"/testimonies/\d+/$"))
        assert words["approved"] in page.locator("h1").inner_text()
        statement = page.locator("div.statement")
        assert statement.get_attribute("dir") == "rtl" and "المهجع رقم ٣" in statement.inner_text()
        assert "المهجع رقم ٣" in page.locator("div.diff div.added").all_inner_texts().__str__()
        assert "مهجع جماعي" in page.locator("div.diff div.removed").all_inner_texts().__str__()
        history = page.locator("#versions table.list tbody tr")
        assert history.count() == 2
        assert "investigator" in history.nth(1).inner_text()
        review = _section(page, "Review", language)
        assert re.search(r"lead: .* → " + re.escape(words["approved"]), review), review
        assert words["prosecution"] in page.locator("dl.facts").inner_text()


def _section(page, english_title: str, language: str) -> str:
    """The text of the page's section whose heading is ``english_title``, translated."""
    with translation.override(language):
        title = translation.gettext(english_title)
    heading = page.locator("h2", has_text=re.compile(rf"^\s*{re.escape(title)}\s*$"))
    return page.locator("section", has=heading).inner_text()
