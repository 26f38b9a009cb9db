"""A family identification session on the demo case, in headless Chromium: the lead
prepares candidates for the missing victim, they are shown blurred, the mother chooses
to look at one and identifies her son, his status follows, and every photo shown is in
the audit log."""

import pytest

from tests.browser.test_flows import CHROMIUM, _browser_page, _sign_in, server  # noqa: F401
from tests.scratch_db import run_manage

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="Debian chromium is not installed")

CASE = "DEMO-2014-001"
VICTIM, MOTHER = "V-0001", "W-0002"


def _shown_audited(env) -> list[str]:
    """The targets of the "photo shown" entries of the scratch database."""
    code = (
        "from casefiles.models import AuditEntry;"
        "print('SHOWN:' + ','.join(AuditEntry.objects.filter(action='missing.photo_shown')"
        ".order_by('pk').values_list('target_id', flat=True)))"
    )
    lines = run_manage(env, "shell", "-c", code).stdout.splitlines()
    out = next(line for line in lines if line.startswith("SHOWN:")).removeprefix("SHOWN:")
    return out.split(",") if out else []


def test_a_family_identification_session_on_the_demo_case(server):  # noqa: F811
    with _browser_page(server.url) as page:
        _sign_in(page, "lead")
        page.wait_for_url("**/cases/")
        page.goto(f"/cases/{CASE}/")
        page.click("#case-missing")
        page.wait_for_selector("table.list")
        page.click(f"table.list a:text-is('{VICTIM}')")
        page.wait_for_selector("#missing-status")
        assert page.get_attribute("#missing-status", "data-status") == "missing"
        # Its antemortem description: revealed on request (audited).
        page.click("#reveal-profile")
        page.wait_for_selector("#antemortem")
        assert "scar above the left eyebrow" in page.inner_text("#antemortem")

        # The lead prepares the candidates: bodies 25 to 35 of the camera card.
        page.click("#prepare-session")
        page.select_option("#id_family_member", label=MOTHER)
        page.fill("#id_number_from", "25")
        page.fill("#id_number_to", "35")
        page.click("form.card button[type=submit]")
        page.wait_for_selector("ul.candidates")
        blurred = page.locator("li.candidate.blurred")
        total = blurred.count()
        assert total == 11
        assert page.locator("ul.candidates img").count() == 0  # no picture sent at all
        # Each stands as a blurred box, side by side (the stylesheet's: the CSP drops
        # style attributes).
        box = page.locator("li.candidate.blurred .blur-box").first.bounding_box()
        assert box is not None and box["width"] > 100 and box["height"] > 100
        assert "blur" in blurred.first.locator(".blur-box").evaluate(
            "e => getComputedStyle(e).filter"
        )
        assert _shown_audited(server.env) == []

        # The mother chooses to look at the sixth (body 31, the photo of her son).
        page.locator("li.candidate").nth(5).locator("button.look").click()
        page.wait_for_selector("li.candidate.shown img")
        assert page.locator("li.candidate.blurred").count() == total - 1
        assert len(_shown_audited(server.env)) == 1
        # And at the first: each photo shown, one entry.
        page.locator("li.candidate").nth(0).locator("button.look").click()
        page.wait_for_function("document.querySelectorAll('li.candidate.shown').length == 2")
        assert len(set(_shown_audited(server.env))) == 2

        shown = page.locator("li.candidate").nth(5)
        # Each shown photo has its own form: its labels name its own inputs.
        shown.get_by_label("Confidence").select_option("certain")
        shown.get_by_label("The victim's status becomes").select_option("identified")
        shown.get_by_label("Who was present").fill("The case lead, the mother, her brother")
        shown.get_by_label("The family member consents").check()
        shown.locator("button[type=submit]").click()
        page.wait_for_selector("li.candidate p.identified")
        # Who was present is shown to the lead beside the identification.
        present = page.locator("li.candidate p.present").inner_text()
        assert "The case lead, the mother, her brother" in present

        page.goto(f"/cases/{CASE}/missing/{VICTIM}/")
        assert page.get_attribute("#missing-status", "data-status") == "identified"
        assert len(_shown_audited(server.env)) == 2


def test_the_missing_pages_render_in_arabic(server):  # noqa: F811
    with _browser_page(server.url) as page:
        _sign_in(page, "lead")
        page.wait_for_url("**/cases/")
        page.context.add_cookies([{"name": "django_language", "value": "ar", "url": server.url}])
        page.goto(f"/cases/{CASE}/missing/")
        assert page.locator("html").get_attribute("lang") == "ar"
        assert page.locator("html").get_attribute("dir") == "rtl"
        assert "المفقودون" in page.inner_text("h1")
        page.goto(f"/cases/{CASE}/missing/{VICTIM}/")
        assert "ملف ما قبل الوفاة" in page.inner_text("h1")
        page.click("#prepare-session")
        page.wait_for_selector("#id_family_member")
        assert "رقم الجثة من" in page.inner_text("main")
        blank = page.locator("#id_family_member option").first.inner_text()
        assert blank == "- اختر من القائمة -"
