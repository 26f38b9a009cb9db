"""The custody report (PDF): Arabic shaped and in logical order in the text pdftotext
reads, the package's id and its tagmanifest hash on every page, nothing fetched."""

import hashlib
import io
import os
import subprocess
import sys

import pytest
from django.core.management import call_command
from django.urls import reverse

from disclosure import report, services
from disclosure.models import Package

from .conftest import BODY

pytestmark = pytest.mark.django_db


def pdf_text(pdf: bytes, tmp_path) -> list[str]:
    path = tmp_path / "report.pdf"
    path.write_bytes(pdf)
    out = subprocess.run(["pdftotext", "-enc", "UTF-8", str(path), "-"], capture_output=True)
    assert out.returncode == 0, out.stderr
    return [page for page in out.stdout.decode().split("\f") if page.strip()]


@pytest.fixture
def built(world, tmp_path):
    package = services.request_package(
        actor=world.cast.lawyer, case=world.case, recipient=BODY, purpose="prosecution"
    )
    package = services.approve_package(actor=world.cast.lead, package=package)
    call_command(
        "disclosure", "build", str(package.pk), "--out", str(tmp_path / "bag"), stdout=io.StringIO()
    )
    return Package.objects.select_related("case").get(pk=package.pk)


def test_every_page_names_the_package_and_its_manifest_hash(built, world, tmp_path):
    pages = pdf_text(report.package_report(built), tmp_path)
    manifest = hashlib.sha256((tmp_path / "bag" / "manifest-sha256.txt").read_bytes()).hexdigest()
    assert len(pages) >= 2
    for page in pages:
        assert built.code in page
        assert manifest in page.replace("\n", "").replace(" ", "")
    text = "\n".join(pages)
    assert "تقرير سلسلة العهدة" in text  # shaped glyphs read back in logical order
    assert "التسلسل الزمني للعهدة" in text
    assert world.photos[0].original.sha256 in text.replace("\n", "")
    assert world.critical.code in text


def test_the_report_fetches_nothing():
    fetcher = report.local_only()
    with pytest.raises(report.RefusedFetch):
        fetcher("http://example.org/font.woff")
    with pytest.raises(report.RefusedFetch):
        fetcher("file:///etc/passwd")


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
    pages = pdf_text(client.get(url).content, tmp_path)
    assert all(item.reference in p and item.original.sha256 in p.replace("\n", "") for p in pages)
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
