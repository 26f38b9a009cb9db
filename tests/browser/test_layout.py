"""No main page scrolls sideways, on a phone (390 px) or a laptop (1,280 px), in English
or Arabic: long hashes, flags, file names and unbroken words wrap, wide tables scroll
inside their own box, and the header folds onto more lines.

A new page joins the walk by adding its URL name to PAGES (or ADMIN_PAGES).
"""

import json

import pytest
from django.urls import reverse

from tests.browser.test_flows import CHROMIUM, _browser_page, server  # noqa: F401
from tests.scratch_db import run_manage

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="Debian chromium is not installed")

WIDTHS = (390, 1280)
LANGUAGES = ("en", "ar")
LONG = "A" * 40 + "_" + "0123456789" * 12  # a file name with no place to break
WORD = "بلا" * 60 + "x" * 120  # a statement's word with no place to break

# The demo data, with what makes a page wide: long unbroken file names (flagged, and one
# not stored at all), a statement with an endless word, a request for access, a person.
HOSTILE = f"""
import json, tempfile
from pathlib import Path
from django.contrib.auth.models import User
from django.utils import timezone
from casefiles import services as case_services
from casefiles.models import Case
from evidence.intake.pipeline import ingest_path
from demo.photos import demo_photo
from people import services
from people.models import Identity
case = Case.objects.get(reference="DEMO-2014-001")
lead = User.objects.get(username="lead")
with tempfile.TemporaryDirectory() as tmp:
    folder = Path(tmp) / ("{LONG}"[:100]) / "{LONG}"[:120]
    folder.mkdir(parents=True)
    (folder / "{LONG}.jpg").write_bytes(demo_photo(40))
    (folder / "{LONG}-broken.jpg").write_bytes(b"\\xff\\xd8\\xff" + b"\\x00" * 100)
    (folder / "{LONG}-empty.jpg").write_bytes(b"")
    batch = ingest_path(actor=lead, case=case, path=Path(tmp), acquired_from="{LONG}", jobs=1).batch
item = batch.items.order_by("pk").first()
witness = services.register_person(
    actor=lead, case=case, role="witness", identity=Identity(name_ar="{WORD}", name_latin="{LONG}")
)
testimony = services.create_testimony(
    actor=lead, case=case, witness=witness, text="{WORD} {LONG}\\n\\n{WORD}",
    taken_at=timezone.now(), language="ar", mode="video", place="{LONG}",
)
observer = User.objects.get(username="observer")
other = Case.objects.get(reference="DEMO-2013-007")
case_services.request_access(user=observer, case=other, reason="{WORD} {LONG}")
print(json.dumps({{
    "case": case.reference, "item": item.reference, "item_pk": item.pk, "batch": batch.pk,
    "person": witness.code, "testimony": testimony.pk, "user": observer.pk,
}}))
"""

# (who, URL name, arguments named as HOSTILE prints them)
PAGES = [
    ("lead", "casefiles:case_list", []),
    ("lead", "casefiles:case_detail", ["case"]),
    ("lead", "evidence:gallery", ["case"]),
    ("lead", "evidence:item_detail", ["case", "item"]),
    ("lead", "evidence:batch_detail", ["case", "batch"]),
    ("lead", "evidence:custody_create", ["case", "item"]),
    ("lead", "evidence:upload", ["case"]),
    ("lead", "people:people_list", ["case"]),
    ("lead", "people:person_detail", ["case", "person"]),
    ("lead", "people:testimony_detail", ["case", "testimony"]),
    ("lead", "casefiles:case_target_audit", ["case", "=evidence.evidenceitem", "item_pk"]),
    ("lead", "incidents:incident_list", ["case"]),
    ("lead", "incidents:incident_detail", ["case", "=IN-0001"]),
    ("lead", "incidents:case_timeline", ["case"]),
    ("lead", "incidents:case_map", ["case"]),
    ("lead", "places:place_list", []),
    ("lead", "access_requests", []),
    ("lead", "request_access", []),
    ("lead", "security", []),
    ("admin", "home", []),
    ("admin", "casefiles:audit_list", []),
    ("admin", "access_requests", []),
    ("admin", "manage_users", []),
    ("admin", "manage_user", ["user"]),
    ("admin", "manage_expiring", []),
]

ADMIN_PAGES = [
    ("admin", "admin:index", []),
    ("admin", "admin:casefiles_auditentry_changelist", []),
    ("admin", "admin:casefiles_case_changelist", []),
    ("admin", "admin:auth_user_changelist", []),
    ("admin", "admin:auth_user_change", ["user"]),
]


@pytest.fixture(scope="module")
def made(server):  # noqa: F811
    done = run_manage(server.env, "shell", "--no-imports", "-c", HOSTILE, check=False)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def _url(name, args, made):
    return reverse(name, args=[a[1:] if a.startswith("=") else made[a] for a in args])


WIDE = "() => document.documentElement.scrollWidth - window.innerWidth"


def _too_wide(server, made, pages):  # noqa: F811
    """Every (page, width, language) that scrolls sideways, with how far."""
    wide = []
    for who in dict.fromkeys(who for who, _, _ in pages):
        with _browser_page(server.url) as page:
            page.goto("/")
            page.fill("#id_username", who)
            page.fill("#id_password", f"athar-demo-{who}")
            page.click("button[type=submit]:has-text('Sign in')")
            # Members land on their cases, an admin in no case on the start page.
            page.wait_for_url(lambda url: "/accounts/login" not in url)
            for language in LANGUAGES:
                page.context.add_cookies(
                    [{"name": "django_language", "value": language, "url": server.url}]
                )
                for width in WIDTHS:
                    page.set_viewport_size({"width": width, "height": 900})
                    for _, name, args in (p for p in pages if p[0] == who):
                        url = _url(name, args, made)
                        answer = page.goto(url)
                        assert answer.status == 200, (who, url, answer.status)
                        assert page.locator("html").get_attribute("lang") == language
                        if (over := page.evaluate(WIDE)) > 0:
                            wide.append(f"{url} {language} {width}px: {over}px too wide")
    return wide


def test_no_main_page_scrolls_sideways_on_a_phone_or_a_laptop_in_either_language(
    server,  # noqa: F811
    made,
):
    wide = _too_wide(server, made, PAGES)
    assert not wide, "\n".join(wide)


def test_no_admin_page_scrolls_sideways_on_a_phone_or_a_laptop_in_either_language(
    server,  # noqa: F811
    made,
):
    wide = _too_wide(server, made, ADMIN_PAGES)
    assert not wide, "\n".join(wide)


def test_the_demo_timeline_draws_its_marks_in_either_direction(server, made):  # noqa: F811
    """Drawn on the server: marks that link to records, left to right in English and
    right to left in Arabic; nothing is asked of another server (``_browser_page``)."""
    with _browser_page(server.url) as page:
        page.goto("/")
        page.fill("#id_username", "lawyer")
        page.fill("#id_password", "athar-demo-lawyer")
        page.click("button[type=submit]:has-text('Sign in')")
        page.wait_for_url(lambda url: "/accounts/login" not in url)
        url = reverse("incidents:case_timeline", args=[made["case"]])
        for language, direction in (("en", "ltr"), ("ar", "rtl")):
            page.context.add_cookies(
                [{"name": "django_language", "value": language, "url": server.url}]
            )
            page.goto(url)
            svg = page.locator("svg.timeline")
            assert svg.get_attribute("direction") == direction
            marks = page.locator("svg.timeline a.mark")
            assert marks.count() >= 3  # the incident, the photos' days, the testimony
            incident = page.locator('svg.timeline a.mark[href*="/incidents/IN-0001/"]')
            assert incident.count() == 1
        incident.click()
        page.wait_for_url("**/incidents/IN-0001/")


def test_the_demo_map_draws_its_places_in_either_language(server, made):  # noqa: F811
    """Drawn on the server over outlines shipped with the app: governorates labelled in
    the page's language, the demo incident placed, a governorate opening the gallery
    filtered to it; nothing is asked of another server (``_browser_page``)."""
    with _browser_page(server.url) as page:
        page.goto("/")
        page.fill("#id_username", "lawyer")
        page.fill("#id_password", "athar-demo-lawyer")
        page.click("button[type=submit]:has-text('Sign in')")
        page.wait_for_url(lambda url: "/accounts/login" not in url)
        url = reverse("incidents:case_map", args=[made["case"]])
        for language, direction, aleppo in (("en", "ltr", "Aleppo"), ("ar", "rtl", "حلب")):
            page.context.add_cookies(
                [{"name": "django_language", "value": language, "url": server.url}]
            )
            page.goto(url)
            svg = page.locator("svg.casemap")
            assert svg.get_attribute("direction") == direction
            assert page.locator("svg.casemap path.country").count() == 8
            assert page.locator("svg.casemap a.mark.governorate").count() == 14
            assert page.locator('svg.casemap a.mark[href*="/incidents/IN-0001/"]').count() == 1
            label = page.locator("svg.casemap text.label", has_text=aleppo).first
            assert label.is_visible()
        label.click()
        page.wait_for_url("**/evidence/?place=*")
