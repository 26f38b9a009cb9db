"""Numbers a reader copies (coordinates, sizes in bytes, hashes, camera values) are written
the same way in Arabic and in English: a dot for decimals, no grouping."""

import re
import zipfile
from html.parser import HTMLParser

import pytest
from django.urls import reverse
from django.utils import timezone

from casefiles.models import AuditEntry
from evidence import imaging
from evidence.intake.pipeline import ingest_path
from people import services as people_services
from tests.evidence.helpers import take_in
from tests.evidence.images import jpeg_bytes
from tests.factories import register_person
from tests.html import page_text

pytestmark = pytest.mark.django_db

NUMBER = re.compile(r"\d+(?:[.,\u066b\u066c]\d+)*")  # Arabic decimal and thousands signs too


class _MainText(HTMLParser):
    """The text of a page's <main>, without its scripts and forms' hidden values."""

    def __init__(self):
        super().__init__()
        self.depth, self.parts = 0, []

    def handle_starttag(self, tag, attrs):
        if tag == "main" or self.depth:
            self.depth += 1

    def handle_endtag(self, tag):
        if self.depth:
            self.depth -= 1

    def handle_data(self, data):
        if self.depth:
            self.parts.append(data)


def numbers(html: str) -> list[str]:
    parser = _MainText()
    parser.feed(html)
    return sorted(NUMBER.findall(" ".join(parser.parts)))


@pytest.fixture
def record(cast, tmp_path, monkeypatch):
    """A photo with GPS and camera values, in a batch, and a witness with a testimony."""
    read_exif = imaging.read_exif

    def with_camera_values(img, result):  # as a camera that writes them as decimals
        read_exif(img, result)
        result.metadata |= {"ExposureTime": 0.004, "FNumber": 2.8, "FocalLength": 35.5}

    monkeypatch.setattr(imaging, "read_exif", with_camera_values)
    big = jpeg_bytes(1, size=(1600, 1200), quality=100)
    batch = take_in(cast.case, cast.investigator, {"DSC_0001.jpg": big}, tmp_path / "m")
    item = batch.items.get()
    archive = tmp_path / "archive.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("DSC_0002.jpg", jpeg_bytes(2))
    zip_batch = ingest_path(
        actor=cast.investigator, case=cast.case, path=archive, acquired_from="W-0001", jobs=1
    ).batch
    assert zip_batch.source_size
    witness = register_person(cast.case, cast.investigator)
    testimony = people_services.create_testimony(
        actor=cast.investigator,
        case=cast.case,
        witness=witness,
        text="Statement of 12.5 pages.",
        taken_at=timezone.now(),
        language="en",
        mode="video",
    )
    return {
        "item": item,
        "batch": batch,
        "zip_batch": zip_batch,
        "witness": witness,
        "testimony": testimony,
    }


def _pages(case, record):
    ref = case.reference
    return [
        record["item"].get_absolute_url(),
        reverse("evidence:gallery", args=[ref]),
        reverse("evidence:batch_detail", args=[ref, record["batch"].pk]),
        reverse("evidence:batch_detail", args=[ref, record["zip_batch"].pk]),
        reverse("casefiles:case_detail", args=[ref]),
        reverse("people:people_list", args=[ref]),
        reverse("people:person_detail", args=[ref, record["witness"].code]),
        reverse("people:testimony_detail", args=[ref, record["testimony"].pk]),
    ]


def _in(client, language, url):
    client.post(reverse("set_language"), {"language": language, "next": "/"})
    response = client.get(url)
    assert response.status_code == 200, url
    return response.content.decode()


def test_the_item_page_writes_gps_sizes_and_camera_values_with_a_dot_in_arabic(
    client, cast, record
):
    client.force_login(cast.lead)
    item = record["item"]
    arabic = _in(client, "ar", item.get_absolute_url())
    assert 'dir="rtl"' in arabic
    assert "33.5100000, 36.2900000" in arabic
    assert "0.004" in arabic and "2.8" in arabic and "35.5" in arabic
    assert f"{item.original.size} " in arabic and "33,51" not in arabic
    assert item.original.sha256 in arabic


def test_an_archives_size_is_written_in_bytes_the_same_way_in_both_languages(client, cast, record):
    client.force_login(cast.lead)
    batch = record["zip_batch"]
    url = reverse("evidence:batch_detail", args=[cast.case.reference, batch.pk])
    for language in ("en", "ar"):
        assert f"{batch.source_size} " in _in(client, language, url)


def test_every_page_writes_the_same_numbers_in_arabic_and_english(client, cast, record):
    client.force_login(cast.lead)
    for url in _pages(cast.case, record):
        english, arabic = numbers(_in(client, "en", url)), numbers(_in(client, "ar", url))
        assert english == arabic, url


def test_the_audit_log_writes_the_same_numbers_in_both_languages(client, cast, record):
    client.force_login(cast.admin)
    # The same entries both times: each view of the log adds one after them.
    head = AuditEntry.objects.order_by("-seq").first().seq
    url = reverse("casefiles:audit_list") + f"?before={head + 1}"
    english, arabic = numbers(_in(client, "en", url)), numbers(_in(client, "ar", url))
    assert english == arabic


def test_a_size_is_written_exactly_and_roughly_with_a_dot_in_both_languages():
    from django.utils import translation

    from casefiles.templatetags.athar_format import size

    assert page_text(size(512)) == "512 bytes"
    assert page_text(size(2516582)) == "2516582 bytes (2.4 MB)"
    assert page_text(size(1024)) == "1024 bytes (1 KB)"
    assert size("<b>") == "" and size(None) == ""
    with translation.override("ar"):
        arabic = page_text(size(2516582))
        assert arabic.startswith("2516582 ") and "(2.4 MB)" in arabic


BDI = re.compile(r'<bdi class="(when|size|distance)"( dir="ltr")?>(.*?)</bdi>(?:\)</bdi>)?')


def _isolated(html: str) -> dict[str, list[str]]:
    """The dates, sizes and distances of a page, each as its own <bdi> holds it."""
    found: dict[str, list[str]] = {}
    for kind, _, text in BDI.findall(html):
        found.setdefault(kind, []).append(re.sub(r"<[^>]+>", "", text))
    return found


def test_dates_sizes_and_distances_are_isolated_on_an_arabic_page(client, cast, record):
    """On an Arabic page a bare "2014-03-12 10:20" is laid out "10:20 2014-03-12" and a
    size's "(2.4 MB)" or a distance's figure joins the words around it: each is written
    in its own <bdi>, dates and times left to right."""
    client.force_login(cast.lead)
    item = record["item"]
    page = _in(client, "ar", item.get_absolute_url())
    isolated = _isolated(page)
    acquired = f"{item.provenance.acquired_at:%Y-%m-%d %H:%M}"
    assert acquired in isolated["when"]
    assert f'<bdi class="when" dir="ltr">{acquired}</bdi>' in page
    assert any(s.startswith(f"{item.original.size} بايت") for s in isolated["size"])
    assert '(<bdi dir="ltr">' in page  # the rough size, with its Latin unit
    assert isolated["distance"] and all(d.endswith(" كم") for d in isolated["distance"])
    # No distance is left bare (a choice's label, "±1 كم", is not a distance shown).
    bare = re.sub(r"<option .*?</option>", "", re.sub(BDI, "", page))
    assert not re.search(r"\d km|\d كم", bare)

    batch = record["zip_batch"]
    page = _in(client, "ar", reverse("evidence:batch_detail", args=[cast.case.reference, batch.pk]))
    assert any(s.startswith(f"{batch.source_size} ") for s in _isolated(page)["size"])

    client.force_login(cast.admin)
    page = _in(client, "ar", reverse("casefiles:audit_list"))
    latest = AuditEntry.objects.order_by("-seq")[1]  # the latest before this view's own
    assert f"{latest.at:%Y-%m-%d %H:%M:%S}" in _isolated(page)["when"]
