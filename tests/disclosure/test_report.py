"""The custody report (PDF): drawn from the bag's files alone, the same bytes from the same
bag; a front page that says what the package holds and how to check it; each value on its
label's line (English and Arabic labels, the Arabic from the .po); times in words."""

import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from datetime import UTC, datetime

import pytest
from django.core.management import call_command
from django.urls import reverse
from django.utils import translation
from django.utils.translation import gettext

from disclosure import exporting, report, services
from disclosure.models import Package

from .conftest import BODY

pytestmark = pytest.mark.django_db


def pdf_text(pdf: bytes, tmp_path) -> list[str]:
    path = tmp_path / "report.pdf"
    path.write_bytes(pdf)
    out = subprocess.run(["pdftotext", "-enc", "UTF-8", str(path), "-"], capture_output=True)
    assert out.returncode == 0, out.stderr
    return [page for page in out.stdout.decode().split("\f") if page.strip()]


def pdf_words(pdf: bytes, tmp_path) -> list[list[tuple[float, float, str]]]:
    """Each page's words as (top, bottom, text), from ``pdftotext -bbox``; a right-to-left
    word comes in visual order: its text reversed."""
    path = tmp_path / "words.pdf"
    path.write_bytes(pdf)
    out = subprocess.run(["pdftotext", "-bbox", str(path), "-"], capture_output=True, check=True)
    root = ET.fromstring(re.sub(rb"<!DOCTYPE[^>]*>", b"", out.stdout))  # noqa: S314 (ours)
    xhtml = "{http://www.w3.org/1999/xhtml}"
    return [
        [
            (float(w.get("yMin")), float(w.get("yMax")), w.text or "")
            for w in page.iter(f"{xhtml}word")
        ]
        for page in root.iter(f"{xhtml}page")
    ]


def boxes(words, text: str) -> list[tuple[float, float]]:
    """Where a word is (its top and bottom); an Arabic word is found reversed; a value's
    word may carry the punctuation after it."""
    return [
        (top, bottom)
        for top, bottom, w in words
        if w in (text, text[::-1])
        or (w.startswith(text) and len(w) <= len(text) + 1)
        or (not text.isascii() and len(w) >= 3 and w[::-1] in text)  # "الطر يقة": split
    ]


def arabic_word(text: str) -> str:
    """A word of an Arabic label with no punctuation or Latin (pdftotext mirrors brackets)."""
    return next(w for w in text.split() if w.isalpha() and not w.isascii())


def on_one_line(words, label: str, value: str) -> bool:
    """Some line holds both a word of the label and the value's first word: the middle of
    one within the other's height (fonts of two scripts differ in their ascent)."""
    labels, values = boxes(words, label), boxes(words, value.split()[0])
    return any(
        t1 <= (t2 + b2) / 2 <= b1 and t2 <= (t1 + b1) / 2 <= b2
        for t1, b1 in labels
        for t2, b2 in values
    )


def build(world, tmp_path) -> Package:
    package = services.request_package(
        actor=world.cast.lawyer, case=world.case, recipient=BODY, purpose="prosecution"
    )
    package = services.approve_package(actor=world.cast.lead, package=package)
    call_command(
        "disclosure", "build", str(package.pk), "--out", str(tmp_path / "bag"), stdout=io.StringIO()
    )
    package = Package.objects.select_related("case").get(pk=package.pk)
    # The thumbnails the build adds as tag files (integrated into the build separately).
    items = exporting.items_of(package)
    for name, data in report.thumbnail_tags(
        package, items, exporting.redactions_of(package)
    ).items():
        (tmp_path / "bag" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "bag" / name).write_bytes(data)
    return package


@pytest.fixture
def built(world, tmp_path):
    return build(world, tmp_path)


def test_drawn_from_the_bag_alone_and_the_same_bytes_every_time(
    built, tmp_path, django_assert_num_queries
):
    bag = tmp_path / "bag"
    with django_assert_num_queries(0):
        pdf = report.render_from_bag(bag)
    assert report.render_from_bag(bag) == pdf
    # A copy elsewhere (other paths, other times), before the build fills items.json's
    # sha512 and with the report itself already in place: the same bytes.
    copy = tmp_path / "elsewhere" / "copy"
    shutil.copytree(bag, copy)
    rows = json.loads((copy / "metadata/items.json").read_text())
    for row in rows:
        row["sha512"] = ""
    (copy / "metadata/items.json").write_text(json.dumps(rows))
    (copy / report.REPORT_NAME).write_bytes(pdf[:100])
    assert report.render_from_bag(copy) == pdf
    # Its creation date is the bag's (never the clock's), and it has no random identifier.
    date = dict(line.split(": ", 1) for line in (bag / "bag-info.txt").read_text().splitlines())[
        "Bagging-Date"
    ]
    (tmp_path / "info.pdf").write_bytes(pdf)
    info = subprocess.run(
        ["pdfinfo", "-isodates", str(tmp_path / "info.pdf")], capture_output=True, text=True
    ).stdout
    assert re.search(rf"^CreationDate:\s+{date}T00:00:00", info, re.M), info
    assert b"/ID" not in pdf
    # What the bag says is what the report says: change a custody row, and it shows.
    custody = sorted((copy / "metadata/custody").glob("*.json"))[0]
    doc = json.loads(custody.read_text())
    doc["events"][0]["columns"]["to_custodian"] = "someone-else-entirely"
    custody.write_text(json.dumps(doc))
    assert "someone-else-entirely" in "".join(pdf_text(report.render_from_bag(copy), tmp_path))


def test_each_page_names_the_package_its_page_and_the_manifests_hash(built, world, tmp_path):
    bag = tmp_path / "bag"
    pages = pdf_text(report.render_from_bag(bag), tmp_path)
    manifest = hashlib.sha256((bag / "manifest-sha256.txt").read_bytes()).hexdigest()
    assert len(pages) >= 2
    for n, page in enumerate(pages, 1):
        assert built.code in page
        assert f"Page {n} / {len(pages)}" in page
        assert manifest in page.replace("\n", "").replace(" ", "")
    text = "\n".join(pages)
    assert "تقرير سلسلة العهدة" in text  # shaped glyphs read back in logical order
    assert "التسلسل الزمني للعهدة" in text
    assert world.photos[0].original.sha256 in text.replace("\n", "")
    assert world.critical.code in text
    assert "manifest-sha512.txt" in text
    rows = json.loads((bag / "metadata/items.json").read_text())
    assert rows[0]["sha512"] and rows[0]["sha512"] not in text.replace("\n", "")


def test_the_front_page_says_what_the_package_holds_and_how_to_check_it(built, tmp_path):
    bag = tmp_path / "bag"
    front = pdf_text(report.render_from_bag(bag), tmp_path)[0]
    flat = " ".join(front.split())
    items = json.loads((bag / "metadata/items.json").read_text())
    testimonies = json.loads((bag / "metadata/testimonies.json").read_text())
    events = sum(len(json.loads(p.read_text())["events"]) for p in bag.glob("metadata/custody/*"))
    words = pdf_words(report.render_from_bag(bag), tmp_path)[0]
    for label, count in (
        ("Evidence items", len(items)),
        ("Testimonies (statements)", len(testimonies)),
        ("Custody events", events),
    ):
        assert on_one_line(words, label.split()[0], str(count)), label
        with translation.override("ar"):
            assert on_one_line(words, arabic_word(gettext(label)), str(count)), label
    assert BODY in flat and "prosecution" in flat and "lawyer" in flat and "lead" in flat
    for check in ("bagit.py --validate", "sha256sum -c", "sha512sum -c", "openssl pkeyutl"):
        assert check in flat
    assert "verify.py" in flat and "If a check fails" in flat
    command = "openssl pkey -pubin -in public-key.pem -outform DER | sha256sum"
    assert command in flat and "/.well-known/athar-signing-keys" in flat.replace(" ", "")
    # The fingerprint shown is what that command prints.
    der = subprocess.run(
        ["openssl", "pkey", "-pubin", "-in", "public-key.pem", "-outform", "DER"],
        cwd=bag,
        capture_output=True,
        check=True,
    ).stdout
    assert hashlib.sha256(der).hexdigest() in flat
    with translation.override("ar"):
        assert " ".join(gettext(report.SUMMARY["if_fails"]).split()) in flat
        assert gettext(report.SUMMARY["if_fails"]) != report.SUMMARY["if_fails"]


def test_each_value_sits_on_its_labels_line_in_english_and_arabic(built, world, tmp_path):
    bag = tmp_path / "bag"
    pages = pdf_words(report.render_from_bag(bag), tmp_path)
    words = pages[1]  # the first item, on the page after the front page
    row = json.loads((bag / "metadata/items.json").read_text())[0]
    expected = {
        "Camera": row["camera"],
        "GPS (latitude, longitude)": row["gps_latitude"],
        "Source": row["source"]["code"],
        "Acquired from": row["acquired_from"],
        "Method": row["acquisition_method"],
        "Path on the medium": row["original_path"],
        "Size and type": str(row["size"]),
        "SHA-256 of the file": row["sha256"],
    }
    for label, value in expected.items():
        assert on_one_line(words, label.split()[0], value), (label, value)
        with translation.override("ar"):
            arabic = gettext(label)
        assert arabic != label, label  # from the .po, through gettext
        assert on_one_line(words, arabic_word(arabic), value), (arabic, value)
    # The old misalignment: the camera's line never holds the GPS value.
    assert not on_one_line(words, "Camera", row["gps_latitude"])


def test_times_are_in_words_in_both_languages_without_microseconds(built, tmp_path):
    bag = tmp_path / "bag"
    text = " ".join(" ".join(pdf_text(report.render_from_bag(bag), tmp_path)).split())
    assert not re.search(r"\d\d:\d\d:\d\d[.,]\d", text)
    row = json.loads((bag / "metadata/items.json").read_text())[0]
    taken_in = datetime.fromisoformat(row["intake_date"]).astimezone(UTC)
    assert taken_in.strftime(f"%A {taken_in.day} %B %Y, %H:%M:%S UTC") in text
    with translation.override("ar"):
        weekday = gettext(taken_in.strftime("%A"))
        month = gettext(taken_in.strftime("%B"))
    assert weekday != taken_in.strftime("%A") and weekday in text and month in text


def test_thumbnails_come_from_the_stored_derivatives(built, world, tmp_path):
    from evidence.models import Derivative
    from evidence.storage import evidence_storage

    items = exporting.items_of(built)
    tags = report.thumbnail_tags(built, items, {})
    first = Derivative.objects.get(original=items[0].original, kind="thumbnail")
    with evidence_storage().open(first.storage_key) as fh:
        assert tags[f"metadata/thumbnails/{built.code}-0001.jpg"] == fh.read()
    # A graphic item goes with its blurred thumbnail, or with none.
    items[0].is_graphic = True
    blurred = Derivative.objects.filter(original=items[0].original, kind="blurred").first()
    shown = report.thumbnail_tags(built, items, {}).get(
        f"metadata/thumbnails/{built.code}-0001.jpg"
    )
    if blurred is None:
        assert shown is None
    else:
        with evidence_storage().open(blurred.storage_key) as fh:
            assert shown == fh.read()
    pdf = report.render_from_bag(tmp_path / "bag")
    assert pdf.count(b"/Subtype /Image") >= len(tags) or b"/Image" in pdf


def test_the_report_fetches_nothing():
    fetcher = report.local_only()
    with pytest.raises(report.RefusedFetch):
        fetcher("http://example.org/font.woff")
    with pytest.raises(report.RefusedFetch):
        fetcher("file:///etc/passwd")


def test_a_folder_that_is_not_a_bag_is_named(tmp_path):
    with pytest.raises(report.NotABag, match=r"bag-info\.txt"):
        report.render_from_bag(tmp_path)


def test_the_package_page_and_an_items_page_give_the_report(client, built, world, tmp_path):
    client.force_login(world.cast.lawyer)
    args = [world.case.reference, built.pk]
    response = client.get(reverse("disclosure:package_report", args=args))
    assert response["Content-Type"] == "application/pdf"
    pdf = b"".join(response.streaming_content)
    assert built.code in pdf_text(pdf, tmp_path)[0]
    again = b"".join(client.get(reverse("disclosure:package_report", args=args)).streaming_content)
    assert again == pdf  # stored once, issued again byte for byte
    item = world.photos[1]
    page = client.get(item.get_absolute_url()).content.decode()
    url = reverse("disclosure:item_report", args=[world.case.reference, item.reference])
    assert url in page
    item_pdf = client.get(url).content
    pages = pdf_text(item_pdf, tmp_path)
    assert all(item.reference in p and item.original.sha256 in p.replace("\n", "") for p in pages)
    words = pdf_words(item_pdf, tmp_path)[0]
    assert on_one_line(words, "Camera", item.provenance.camera_make)
    client.force_login(world.cast.outsider)
    assert client.get(url).status_code == 404


def test_making_a_report_leaves_truncated_photos_flagged_at_intake(tmp_path):
    """WeasyPrint tells Pillow, for the whole process, to decode truncated images; once a
    report is made, a web process's intake would then take a truncated photo as sound."""
    code = (
        "import django; django.setup()\n"
        "from PIL import ImageFile\n"
        "from disclosure import report\n"
        "report.weasyprint()\n"
        "print(ImageFile.LOAD_TRUNCATED_IMAGES)\n"
    )
    env = {
        **os.environ,
        "ATHAR_DATA_DIR": str(tmp_path),
        "DJANGO_SETTINGS_MODULE": "athar.settings",
    }
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "False"
