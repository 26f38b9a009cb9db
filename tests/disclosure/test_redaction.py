"""An item showing a protected person without consent for the purpose goes into a package
only as a redacted copy an investigator drew: the original stays out, untouched, and the
copy names its original's hash, the regions and who made it."""

import csv
import io
import json
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

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
    # The package says "a protected person"; the preview shows the code beside.
    assert world.critical.code not in refused[shown.reference]
    [line] = [line for line in found.refused if line.ref == shown.reference]
    assert line.codes == [world.critical.code]


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


MEDIUM = "Kingston stick of Ahmad's brother"
METHOD = "handed over at the Douma clinic"


@pytest.fixture
def identifying(world, tmp_path):
    """A photo whose name, path, camera, GPS, medium and method could each identify who it
    shows (a Critical person without consent for prosecution), approved, with a redacted
    copy; a package of it and the case's two approved photos, built into ``bag``."""
    from evidence.intake.pipeline import ingest_path
    from tests.evidence.images import jpeg_bytes, write

    from .conftest import approve

    picture = jpeg_bytes(
        7, make="Nikon", model="D7000 #3301-serial", gps=((33, 34, 16), "N", (36, 24, 8), "E")
    )
    write(tmp_path / "medium/Douma-Ahmad/Ahmad-Darwish-at-home.jpg", picture)
    report = ingest_path(
        actor=world.cast.investigator,
        case=world.case,
        path=tmp_path / "medium",
        acquired_from="W-0001",
        medium=MEDIUM,
        method=METHOD,
        jobs=1,
    )
    item = report.batch.items.get()
    provenance = item.provenance
    assert provenance.camera_make == "Nikon" and provenance.gps_latitude is not None
    assert item.title == item.original_filename  # intake's title: the file's name
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
    package.refresh_from_db()
    secrets = [
        item.original_filename,
        item.original_path,
        "Ahmad-Darwish-at-home",
        "Douma-Ahmad",
        "Nikon",
        "3301-serial",
        str(provenance.gps_latitude),
        str(provenance.gps_longitude),
        MEDIUM,
        METHOD,
    ]
    return SimpleNamespace(item=item, package=package, bag=bag, secrets=secrets)


def _entries(bag) -> list[dict]:
    path = bag / "metadata/audit/entries.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_a_redacted_item_carries_none_of_its_originals_identifying_metadata(world, identifying):
    """Its name and path on the medium, GPS, camera, medium and method could name the
    person or place the copy covers: each is marked withheld in items.json and items.csv,
    and none of the original's values is anywhere in the bag, its audit excerpt included."""
    from disclosure.exporting import WITHHELD, WITHHELD_WHEN_REDACTED

    bag, item = identifying.bag, identifying.item
    rows = json.loads((bag / "metadata/items.json").read_text())
    redacted = next(r for r in rows if r["reference"] == item.reference)
    whole = next(r for r in rows if r["payload"].startswith("originals/"))
    assert redacted["payload"].startswith("redacted/")
    for name in WITHHELD_WHEN_REDACTED:
        assert redacted[name] == WITHHELD, name
        assert whole[name] != WITHHELD, name
    for name in ("original_filename", "original_path", "gps_latitude", "camera"):
        assert whole[name], name  # a whole original keeps its own
    with (bag / "metadata/items.csv").open(newline="", encoding="utf-8") as fh:
        csv_row = next(r for r in csv.DictReader(fh) if r["reference"] == item.reference)
    assert all(csv_row[name] == WITHHELD for name in WITHHELD_WHEN_REDACTED)
    assert redacted["title"] == WITHHELD  # intake's title: the file's name
    everything = b"\n".join(p.read_bytes() for p in bag.rglob("*") if p.is_file())
    for value in identifying.secrets:
        assert value.encode() not in everything, value
        assert value.casefold().encode() not in everything.lower(), value
    result = subprocess.run([BAGIT, "--validate", str(bag)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    out = io.StringIO()
    call_command("verify_package", str(bag), stdout=out)
    assert out.getvalue().startswith("OK: 4 payload files, 3 custody chains")


def test_the_audit_excerpt_gives_the_entries_naming_it_by_their_digest(world, identifying):
    """The intake's entry names the file's path: it goes with its details withheld, the
    reason said, and their digest, from which the verifier recomputes its hash. Entries
    about the item that name none of it go whole, and still bind their custody events."""
    from casefiles import audit
    from disclosure.excerpt import WITHHELD_PERSON

    bag, item = identifying.bag, identifying.item
    entries = {e["seq"]: e for e in _entries(bag)}
    intake = AuditEntry.objects.get(action="evidence.intake", target_id=str(item.batch_id))
    assert item.original_path in json.dumps(intake.details, ensure_ascii=False)
    doc = entries[intake.seq]
    assert doc["details_sha256"] == audit.details_sha256(intake.details)
    assert doc["details"].startswith("withheld: ") and item.reference in doc["details"]
    assert "redacted copy" in doc["details"]
    # The identification names the Critical witness, without consent for prosecution, by
    # her code (decision 0029): by its digest too. Review decisions go whole.
    named = AuditEntry.objects.get(action="evidence.identification", target_id=str(item.pk))
    assert entries[named.seq]["details"] == WITHHELD_PERSON
    kept = AuditEntry.objects.filter(action="review.approve", target_id=str(item.pk)).get()
    assert (
        entries[kept.seq]["details"] == kept.details and "details_sha256" not in entries[kept.seq]
    )
    withheld = sorted(seq for seq, e in entries.items() if "details_sha256" in e)
    assert intake.seq in withheld and named.seq in withheld
    built = AuditEntry.objects.get(action="disclosure.build")
    assert built.details["withheld_details"] == withheld
    custody = json.loads(
        (bag / "metadata/custody" / f"{identifying.package.code}-0003.json").read_text()
    )
    assert custody["events"][0]["bound_by"] == intake.seq
    out = io.StringIO()
    call_command("verify_package", str(bag), stdout=out)
    said = out.getvalue()
    assert f"{len(withheld)} of them with details withheld, checked by their digest: " in said
    assert f"#{intake.seq}" in said and f"#{named.seq}" in said
    # This photo's "acquired" event and the world's two (their intake names the third
    # photo, not in the package).
    assert "custody events bound by them, a binding the package does not show: 3)" in said
    python = shutil.which("python3", path="/usr/local/bin:/usr/bin:/bin") or sys.executable
    alone = subprocess.run(
        [python, "-I", "verify.py", "."], cwd=bag, capture_output=True, text=True, env={}
    )
    assert alone.returncode == 0 and alone.stdout.startswith("OK: 4 payload files"), alone.stdout


def test_built_twice_the_bag_with_withheld_details_is_the_same_bytes(world, identifying, tmp_path):
    from disclosure.services import building

    package = identifying.package
    one, two = tmp_path / "one", tmp_path / "two"
    building.write_bag(package, one)
    building.write_bag(package, two)
    files = sorted(p.relative_to(one) for p in one.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(two) for p in two.rglob("*") if p.is_file())
    for name in files:
        assert (one / name).read_bytes() == (two / name).read_bytes(), name
    assert any("details_sha256" in e for e in _entries(one))


def _rewrite(bag, change) -> None:
    lines = _entries(bag)
    change(lines)
    text = "".join(json.dumps(e, ensure_ascii=False, sort_keys=True) + "\n" for e in lines)
    (bag / "metadata/audit/entries.jsonl").write_text(text, encoding="utf-8")


def _fails_with(bag, match) -> None:
    with pytest.raises(CommandError, match=match):
        call_command("verify_package", str(bag), stdout=io.StringIO())


def test_a_changed_withheld_digest_or_kept_entry_or_order_is_named(world, identifying, tmp_path):
    from .test_bag import _resign

    bag = identifying.bag
    hidden = next(e["seq"] for e in _entries(bag) if "details_sha256" in e)
    whole = next(e["seq"] for e in _entries(bag) if "details_sha256" not in e)

    def at(seq):
        return lambda lines: next(e for e in lines if e["seq"] == seq)

    def digest(lines):
        entry = at(hidden)(lines)
        entry["details_sha256"] = ("0" if entry["details_sha256"][0] != "0" else "1") + entry[
            "details_sha256"
        ][1:]

    def details(lines):
        at(whole)(lines)["details"]["forged"] = "yes"

    def shown(lines):  # details put back beside the digest, unchecked: refused
        at(hidden)(lines)["details"] = {"items": [["EV-000009", "0" * 64, "elsewhere.jpg"]]}

    def swapped(lines):
        lines[0], lines[1] = lines[1], lines[0]

    def removed(lines):
        lines.remove(at(hidden)(lines))

    cases = [
        (digest, f"audit entry #{hidden}: its hash does not match its content"),
        (details, f"audit entry #{whole}: its hash does not match its content"),
        (shown, f"audit entry #{hidden}: details_sha256 stands beside details not withheld"),
        (swapped, "entries.jsonl: entry #.* is out of order or twice"),
        (removed, "no audit entry of the package binds it"),
    ]
    for n, (change, match) in enumerate(cases):
        copy = tmp_path / f"copy{n}"
        shutil.copytree(bag, copy)
        _rewrite(copy, change)
        _fails_with(copy, "metadata/audit/entries.jsonl: its sha256 differs")  # signed: caught
        _resign(copy)  # a forger's own key: the entries themselves must still catch it
        _fails_with(copy, match)


def test_the_custody_report_withholds_what_items_csv_withholds(world, identifying, tmp_path):
    """The PDF shows a redacted item from its row alone: each withheld field marked on its
    own label's line, none of the original's values (its medium and method included); its
    picture is made from the redacted copy, never the original's thumbnail."""
    from disclosure import exporting, report
    from disclosure.exporting import WITHHELD
    from evidence.models import Derivative
    from evidence.storage import evidence_storage

    from .test_report import on_one_line, pdf_text, pdf_words

    package, bag = identifying.package, identifying.bag
    items = exporting.items_of(package)
    tags = report.thumbnail_tags(package, items, exporting.redactions_of(package))
    n = next(i for i, it in enumerate(items, 1) if it.pk == identifying.item.pk)
    thumb = tags[f"metadata/thumbnails/{exporting.export_id(package, n)}.jpg"]
    original = Derivative.objects.get(original=identifying.item.original, kind="thumbnail")
    with evidence_storage().open(original.storage_key) as fh:
        assert thumb != fh.read()
    picture = Image.open(io.BytesIO(thumb))
    scale = picture.width / Image.open(bag / f"data/redacted/{package.code}-{n:04d}.jpg").width
    x, y, w, h = REGION[0]
    assert picture.getpixel((int((x + w / 2) * scale), int((y + h / 2) * scale)))[0] < 40
    for name, data in tags.items():
        (bag / name).parent.mkdir(parents=True, exist_ok=True)
        (bag / name).write_bytes(data)
    pdf = report.render_from_bag(bag)
    pages = pdf_text(pdf, tmp_path)
    text = "\n".join(pages)
    flat = " ".join(text.split())
    for value in identifying.secrets:
        assert value not in flat and value not in text, value
    words = pdf_words(pdf, tmp_path)[1:]  # the item's table may go on to the next page
    for label in ("Original", "Path", "Method", "Medium", "Camera", "GPS"):
        assert any(on_one_line(page, label, WITHHELD) for page in words), label
    # A whole item's fields are shown: its original name on its label's line.
    name = world.photos[0].original_filename
    assert any(on_one_line(page, "Original", name) for page in words)
    # Name, path, method, medium, camera, GPS (one line), and the title (intake's: the name).
    assert flat.count(WITHHELD) == 7
