"""An item showing a protected person without consent for the purpose goes into a package
only as a redacted copy an investigator drew: the original stays out, untouched, and the
copy names its original's hash, the regions and who made it."""

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.management import call_command
from django.core.management.base import CommandError
from django.utils import timezone
from PIL import Image

from casefiles.models import AuditEntry
from disclosure import services
from disclosure.contents import review
from evidence import services as evidence_services
from evidence.models import CustodyEvent
from tests.evidence.helpers import stored_bytes

from .conftest import BODY

pytestmark = pytest.mark.django_db
BAGIT = str(Path(sys.executable).parent / "bagit.py")
REGION = [[100, 60, 80, 90]]


@pytest.fixture
def shown(world):
    """photos[1] shows the Critical witness (no consent for prosecution), as the
    standard witness identified them."""
    evidence_services.record_identification(
        actor=world.cast.investigator,
        item=world.photos[1],
        witness=world.standard,
        identified=world.critical,
        confidence="certain",
        method="photo",
        identified_on=timezone.now().date(),
    )
    return world.photos[1]


def _request(world):
    return services.request_package(
        actor=world.cast.lawyer, case=world.case, recipient=BODY, purpose="prosecution"
    )


def test_without_a_redacted_copy_the_item_is_left_out_with_the_reason(world, shown):
    found = review(world.cast.lawyer, _request(world))
    refused = {line.ref: line.reason for line in found.refused}
    assert "none has been drawn" in refused[shown.reference]
    assert world.critical.code in refused[shown.reference]


def test_a_redacted_copy_goes_in_instead_of_the_original(world, shown, tmp_path):
    original = stored_bytes(shown)
    redaction = services.redact_item(
        actor=world.cast.investigator, item=shown, regions=REGION, reason="The face."
    )
    assert stored_bytes(shown) == original  # the original is untouched
    package = _request(world)
    line = next(line for line in review(world.cast.lawyer, package).items if line.pk == shown.pk)
    assert line.redaction == redaction.pk and "Redacted copy by investigator" in line.redactions[0]
    package = services.approve_package(actor=world.cast.lead, package=package)
    bag = tmp_path / "bag"
    call_command("disclosure", "build", str(package.pk), "--out", str(bag), stdout=io.StringIO())
    copy = bag / "data/redacted" / f"{package.code}-0002.jpg"
    assert not list((bag / "data/originals").glob(f"{package.code}-0002.*"))
    picture = Image.open(copy)
    assert picture.getpixel((140, 100)) == (0, 0, 0) and picture.getpixel((10, 10)) != (0, 0, 0)
    rows = json.loads((bag / "metadata/items.json").read_text())
    doc = rows[1]["redaction"]
    assert doc["original_sha256"] == shown.original.sha256 and doc["regions"] == REGION
    assert doc["made_by"] == "investigator" and doc["sha256"] == redaction.sha256
    result = subprocess.run([BAGIT, "--validate", str(bag)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    out = io.StringIO()
    call_command("verify_package", str(bag), stdout=out)
    assert out.getvalue().startswith("OK: 3 payload files, 2 custody chains")
    event = CustodyEvent.objects.get(action="exported", item=shown)
    assert event.sha256 == "" and redaction.sha256 in event.notes
    assert AuditEntry.objects.filter(action="disclosure.redact").count() == 1


def test_a_copy_drawn_after_the_approval_stops_the_build(world, shown, tmp_path):
    services.redact_item(actor=world.cast.investigator, item=shown, regions=REGION, reason="x")
    package = services.approve_package(actor=world.cast.lead, package=_request(world))
    services.redact_item(actor=world.cast.investigator, item=shown, regions=REGION, reason="y")
    with pytest.raises(CommandError, match="redacted copy was drawn or replaced"):
        call_command("disclosure", "build", str(package.pk), "--out", str(tmp_path / "b"))


def test_regions_are_checked_and_only_who_adds_evidence_redacts(world, shown):
    for text in ("1,2,3", "a,b,c,d", "1,1,0,5", "", "-1,0,5,5"):
        with pytest.raises(ValidationError):
            services.parse_regions(text)
    assert services.parse_regions("1, 2, 3, 4\n\n5;6;7;8") == [[1, 2, 3, 4], [5, 6, 7, 8]]
    with pytest.raises(ValidationError, match="outside the picture"):
        services.redact_item(
            actor=world.cast.investigator, item=shown, regions=[[300, 200, 50, 50]], reason="x"
        )
    with pytest.raises(PermissionDenied):
        services.redact_item(actor=world.cast.lawyer, item=shown, regions=REGION, reason="x")
    with pytest.raises(ValidationError):
        services.redact_item(actor=world.cast.investigator, item=shown, regions=REGION, reason=" ")


def test_the_redaction_page_draws_a_copy_and_shows_it(client, world, shown):
    from django.urls import reverse

    args = [world.case.reference, shown.reference]
    url = reverse("disclosure:item_redact", args=args)
    client.force_login(world.cast.investigator)
    assert url in client.get(shown.get_absolute_url()).content.decode()
    page = client.get(url).content.decode()
    assert "320 by 240 pixels" in page and "No redacted copy yet" in page
    assert 'data-width="320" data-height="240"' in page and "js/redact.js" in page
    bad = client.post(url, {"regions": "10,10,5000,5", "reason": "The face."})
    assert bad.status_code == 400 and "outside the picture" in bad.content.decode()
    done = client.post(url, {"regions": "100, 60, 80, 90", "reason": "The face."})
    assert done.status_code == 302
    copy = shown.redactions.get()
    image = client.get(reverse("disclosure:redaction_image", args=[*args, copy.pk]))
    assert image["Content-Type"] == "image/jpeg"
    assert image["X-Content-Type-Options"] == "nosniff"
    assert "no-store" in image["Cache-Control"] and image.has_header("Content-Security-Policy")
    assert image.streaming  # from storage a block at a time, never read whole into memory
    body = b"".join(image.streaming_content)
    assert image["Content-Length"] == str(len(body)) == str(copy.size)
    assert Image.open(io.BytesIO(body)).getpixel((140, 100)) == (0, 0, 0)
    assert AuditEntry.objects.filter(action="disclosure.redaction_view").count() == 1
    client.force_login(world.cast.lawyer)
    assert "Make a redacted copy" not in client.get(url).content.decode()
    assert client.post(url, {"regions": "1,1,5,5", "reason": "x"}).status_code == 403


def test_a_redacted_item_carries_none_of_its_originals_identifying_metadata(world, tmp_path):
    """Its name and path on the medium, GPS and camera could name the person or place the
    copy covers: each is marked withheld in items.json and items.csv, and none of the
    original's values is anywhere in the bag."""
    from disclosure.exporting import WITHHELD, WITHHELD_WHEN_REDACTED
    from tests.evidence.helpers import take_in
    from tests.evidence.images import jpeg_bytes

    from .conftest import approve

    picture = jpeg_bytes(
        7, make="Nikon", model="D7000 #3301-serial", gps=((33, 34, 16), "N", (36, 24, 8), "E")
    )
    files = {"Douma-Ahmad/Ahmad-Darwish-at-home.jpg": picture}
    batch = take_in(world.case, world.cast.investigator, files, tmp_path / "medium")
    item = batch.items.get()
    provenance = item.provenance
    secrets = [
        item.original_filename,
        item.original_path,
        "Douma-Ahmad",
        "Nikon",
        "3301-serial",
        str(provenance.gps_latitude),
        str(provenance.gps_longitude),
    ]
    assert provenance.camera_make == "Nikon" and provenance.gps_latitude is not None
    approve(item, world.cast.investigator, world.cast.lead)
    evidence_services.record_identification(
        actor=world.cast.investigator,
        item=item,
        witness=world.standard,
        identified=world.critical,
        confidence="certain",
        method="photo",
        identified_on=timezone.now().date(),
    )
    services.redact_item(actor=world.cast.investigator, item=item, regions=REGION, reason="Face.")
    package = services.approve_package(actor=world.cast.lead, package=_request(world))
    bag = tmp_path / "bag"
    call_command("disclosure", "build", str(package.pk), "--out", str(bag), stdout=io.StringIO())
    rows = json.loads((bag / "metadata/items.json").read_text())
    redacted = next(r for r in rows if r["reference"] == item.reference)
    whole = next(r for r in rows if r["payload"].startswith("originals/"))
    assert redacted["payload"].startswith("redacted/")
    for name in WITHHELD_WHEN_REDACTED:
        assert redacted[name] == WITHHELD, name
        assert whole[name] not in ("", WITHHELD), name  # a whole original keeps its own
    with (bag / "metadata/items.csv").open(newline="", encoding="utf-8") as fh:
        csv_row = next(r for r in csv.DictReader(fh) if r["reference"] == item.reference)
    assert all(csv_row[name] == WITHHELD for name in WITHHELD_WHEN_REDACTED)
    assert redacted["title"] == WITHHELD  # intake's title: the file's name
    # Anywhere in the bag. (Not yet the audit excerpt: the intake's entry names each file's
    # path, and the entry is bound into the hash chain as a whole.)
    audit = bag / "metadata/audit/entries.jsonl"
    everything = b"\n".join(p.read_bytes() for p in bag.rglob("*") if p.is_file() and p != audit)
    for value in secrets:
        assert value.encode() not in everything, value
    result = subprocess.run([BAGIT, "--validate", str(bag)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    out = io.StringIO()
    call_command("verify_package", str(bag), stdout=out)
    assert out.getvalue().startswith("OK: 4 payload files, 3 custody chains")
