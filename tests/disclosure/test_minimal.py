"""Minimal disclosure (decision 0029): a whole item's fields that name a protected person
go withheld unless the approver keeps them with a reason; the audit excerpt gives by
their digest the entries naming records outside the package; redaction reasons name no
unconsented protected code; the preview warns of what links a protected person to a
named one."""

import io
import json
import shutil
import subprocess
from pathlib import Path
from types import SimpleNamespace

import pytest
from django.core.management import call_command
from django.utils import timezone

from casefiles.models import AuditEntry
from disclosure import report, services, verifier
from disclosure.contents import review
from disclosure.exporting import WITHHELD_PROTECTED
from disclosure.models import Package
from evidence import services as evidence_services
from evidence.intake.pipeline import ingest_path
from people import services as people_services
from tests.evidence.images import jpeg_bytes, write

from .conftest import BODY, approve

pytestmark = pytest.mark.django_db
PATH = "Qaisar/Walid-al-Khatib-home.jpg"
MEDIUM = "Samsung phone of Walid's brother"
SERIAL = "SM-G991B-R58N91XYZ"
# Her name and its parts, the alias the folder is named by, and the medium's words. (The
# serial names no one: it goes in the JPEG's own EXIF, which goes byte for byte.)
SECRETS = ["Walid", "Khatib", "Qaisar", "Samsung phone", "brother", "وليد", "الخطيب"]


def _take_in(world, tmp_path, files: dict[str, bytes], medium="", where="medium"):
    for name, data in files.items():
        write(tmp_path / where / name, data)
    return ingest_path(
        actor=world.cast.investigator,
        case=world.case,
        path=tmp_path / where,
        acquired_from="S-0009",
        medium=medium,
        jobs=1,
    ).batch


@pytest.fixture
def named(world, tmp_path):
    """A photo of the Critical witness's home, in a folder and a file named after her,
    from her brother's phone (its serial in the EXIF model); approved in review. The
    witness consented to investigation: her statement goes in a package for it."""
    batch = _take_in(
        world, tmp_path, {PATH: jpeg_bytes(9, make="Samsung", model=SERIAL)}, medium=MEDIUM
    )
    item = batch.items.get()
    approve(item, world.cast.investigator, world.cast.lead)
    package = services.request_package(
        actor=world.cast.lawyer,
        case=world.case,
        recipient=BODY,
        purpose="investigation",
        select=f"{item.reference},{world.photos[1].reference}",
    )
    return SimpleNamespace(item=item, package=package)


def _build(package, out: Path) -> Path:
    call_command("disclosure", "build", str(package.pk), "--out", str(out), stdout=io.StringIO())
    return out


def _everything(bag: Path) -> bytes:
    return b"\n".join(p.read_bytes() for p in sorted(bag.rglob("*")) if p.is_file())


def _report_text(package, tmp_path) -> str:
    pdf = tmp_path / "report.pdf"
    pdf.write_bytes(report.package_report(Package.objects.get(pk=package.pk)))
    found = subprocess.run(
        [shutil.which("pdftotext") or "pdftotext", str(pdf), "-"], capture_output=True, check=True
    )
    return found.stdout.decode()


def _entries(bag: Path) -> list[dict]:
    text = (bag / "metadata/audit/entries.jsonl").read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines()]


def test_the_preview_flags_a_path_naming_a_protected_witness(client, world, named):
    """The approver (a lead, who may reveal her) reads which field names whom, and why."""
    found = review(world.cast.lawyer, named.package)
    flagged = {(m.field, m.code) for _line, m in found.matches}
    code = world.critical.code
    assert {("original_path", code), ("original_filename", code), ("title", code)} <= flagged
    assert ("medium", code) in flagged  # "Walid's brother"
    client.force_login(world.cast.lead)
    page = client.get(named.package.get_absolute_url()).content.decode()
    assert "Fields that name a protected person" in page
    assert f"{named.item.reference}: its path on the medium names {code} by name" in page
    assert "Critical protection" in page and "withheld unless the approver keeps it" in page


def test_the_built_bag_and_report_hold_no_part_of_her_name(world, named, tmp_path):
    package = services.approve_package(actor=world.cast.lead, package=named.package)
    assert package.contents["withheld_fields"][str(named.item.pk)] == [
        "medium",
        "original_filename",
        "original_path",
        "title",
    ]
    bag = _build(package, tmp_path / "bag")
    rows = {r["reference"]: r for r in json.loads((bag / "metadata/items.json").read_text())}
    row = rows[named.item.reference]
    for name in ("original_filename", "original_path", "medium", "title"):
        assert row[name] == WITHHELD_PROTECTED, name
    everything = _everything(bag)
    text = _report_text(package, tmp_path)
    for secret in SECRETS:
        assert secret.encode() not in everything, secret
        assert secret.casefold().encode() not in everything.lower(), secret
        assert secret.casefold() not in text.casefold(), secret
    assert WITHHELD_PROTECTED in text
    assert verifier.verify(bag)


def test_the_approver_keeping_the_path_with_a_reason_lets_it_go_recorded(
    client, world, named, tmp_path
):
    client.force_login(world.cast.lead)
    url = named.package.get_absolute_url()
    ref = named.item.reference
    refused = client.post(f"{url}approve/", {f"keep-{ref}-original_path": "on"})
    assert refused.status_code == 400 and "Say why it may go." in refused.content.decode()
    reason = "The court needs the folder as found on the phone."
    done = client.post(
        f"{url}approve/", {f"keep-{ref}-original_path": "on", f"why-{ref}-original_path": reason}
    )
    assert done.status_code == 302
    package = Package.objects.get(pk=named.package.pk)
    assert package.contents["kept_fields"] == {str(named.item.pk): {"original_path": reason}}
    entry = AuditEntry.objects.get(action="disclosure.approve")
    assert entry.details["kept_fields"] == {ref: {"original_path": reason}}
    assert "original_path" not in entry.details["withheld_fields"][ref]
    bag = _build(package, tmp_path / "bag")
    row = next(
        r for r in json.loads((bag / "metadata/items.json").read_text()) if r["reference"] == ref
    )
    assert row["original_path"] == PATH
    assert row["original_filename"] == WITHHELD_PROTECTED  # not kept: still withheld
    assert verifier.verify(bag)


def test_of_a_60_item_intake_the_excerpt_names_only_the_two_in_the_package(world, tmp_path):
    batch = _take_in(
        world, tmp_path, {f"roll/DSC_{n:04d}.jpg": jpeg_bytes(100 + n) for n in range(60)}
    )
    items = list(batch.items.order_by("pk"))
    items = [items[0], items[-1], *items[1:-1]]  # the package's two first
    for item in items[:2]:
        approve(item, world.cast.investigator, world.cast.lead)
    package = services.request_package(
        actor=world.cast.lawyer,
        case=world.case,
        recipient=BODY,
        purpose="prosecution",
        select=",".join(i.reference for i in items[:2]),
    )
    package = services.approve_package(actor=world.cast.lead, package=package)
    bag = _build(package, tmp_path / "bag")
    excerpt = (bag / "metadata/audit/entries.jsonl").read_bytes()
    for other in items[2:]:
        assert other.original.sha256.encode() not in excerpt, other.reference
        assert other.original_path.encode() not in excerpt, other.reference
        assert other.reference.encode() not in excerpt, other.reference
    # Intake writes one entry per chunk it stores: an entry listing only the package's
    # items goes whole, one listing any other goes by its digest (and so does the
    # binding of the package's "acquired" events it holds).
    mine = {i.reference for i in items[:2]}
    hidden = 0
    for doc in (e for e in _entries(bag) if e["action"] == "evidence.intake"):
        stored = AuditEntry.objects.get(seq=doc["seq"]).details
        listed = {ref for ref, _sha256, _path in stored["items"]}
        if listed <= mine:
            assert doc["details"] == stored
        else:
            assert doc["details"].startswith("withheld: they name ")
            assert "items" in doc["details"] and "not in this package" in doc["details"]
            assert "details_sha256" in doc
            hidden += len(listed & mine)
    assert hidden  # the two are taken from both ends of the roll: never one chunk alone
    result = verifier.verify(bag)
    assert f"a binding the package does not show: {hidden}" in str(result)


def test_an_earlier_packages_build_entry_goes_with_its_details_withheld(world, tmp_path):
    """The earlier package held both photos and named its purpose and the items: this one
    holds one photo. Its custody chain still says it was exported to the other court
    (the item's own history); the other photo, and what else that package held, do not."""
    both = ",".join(p.reference for p in world.photos[:2])
    first = services.request_package(
        actor=world.cast.lawyer,
        case=world.case,
        recipient="Another court (fictional)",
        purpose="prosecution",
        select=both,
    )
    _build(services.approve_package(actor=world.cast.lead, package=first), tmp_path / "one")
    second = services.request_package(
        actor=world.cast.lawyer,
        case=world.case,
        recipient=BODY,
        purpose="prosecution",
        select=world.photos[1].reference,
    )
    bag = _build(services.approve_package(actor=world.cast.lead, package=second), tmp_path / "two")
    earlier = next(e for e in _entries(bag) if e["action"] == "disclosure.build")
    assert earlier["target_id"] == str(first.pk) and "details_sha256" in earlier
    assert earlier["details"].startswith("withheld: they name ")
    excerpt = (bag / "metadata/audit/entries.jsonl").read_bytes()
    assert world.photos[0].reference.encode() not in excerpt
    assert world.photos[0].original.sha256.encode() not in _everything(bag)
    assert verifier.verify(bag)


def test_a_redaction_reason_and_identification_name_no_unconsented_code(world, tmp_path):
    """The Critical witness gave no consent for prosecution: her code is nowhere said to
    be what the copy covers, and the identification entry goes by its digest."""
    item = world.photos[1]
    evidence_services.record_identification(
        actor=world.cast.investigator,
        item=item,
        witness=world.standard,
        identified=world.critical,
        confidence="certain",
        method="photo",
        identified_on=timezone.now().date(),
    )
    code = world.critical.code
    services.redact_item(
        actor=world.cast.investigator,
        item=item,
        regions=[[10, 10, 50, 50]],
        reason=f"Face of {code}.",
    )
    package = services.request_package(
        actor=world.cast.lawyer,
        case=world.case,
        recipient=BODY,
        purpose="prosecution",
        select=item.reference,
    )
    package = services.approve_package(actor=world.cast.lead, package=package)
    bag = _build(package, tmp_path / "bag")
    [row] = json.loads((bag / "metadata/items.json").read_text())
    assert row["redaction"]["reason"] == "Face of a protected person."
    identification = next(e for e in _entries(bag) if e["action"] == "evidence.identification")
    assert identification["details"].startswith("withheld: they name a protected person")
    assert f"Face of {code}".encode() not in _everything(bag)
    assert verifier.verify(bag)


def test_the_preview_warns_where_an_item_ties_a_protected_witness_to_a_named_one(world):
    """The standard witness, named in the package, identified the Critical one in a photo
    that goes (she consented to investigation): whoever knows him may find her."""
    evidence_services.record_identification(
        actor=world.cast.investigator,
        item=world.photos[1],
        witness=world.standard,
        identified=world.critical,
        confidence="certain",
        method="photo",
        identified_on=timezone.now().date(),
    )
    people_services.record_consent(
        actor=world.cast.lead,
        case=world.case,
        person=world.critical,
        scopes=["sharing"],
        bodies=BODY,
        how="written",
        given_on=timezone.now().date(),
    )
    package = services.request_package(
        actor=world.cast.lawyer,
        case=world.case,
        recipient=BODY,
        purpose="sharing",
        named_fields=["name_latin"],
    )
    warnings = review(world.cast.lawyer, package).warnings
    assert any(
        world.photos[1].reference in w and world.critical.code in w and world.standard.code in w
        for w in warnings
    ), warnings


def test_the_preview_names_the_person_only_to_who_may_reveal_them(client, world, named):
    """The lawyer who asked may not reveal a Critical witness: the preview says the path
    names a protected person, not whom (with the path, her code would be her name)."""
    client.force_login(world.cast.lawyer)
    page = client.get(named.package.get_absolute_url()).content.decode()
    assert f"{named.item.reference}: its path on the medium names a protected person" in page
    assert f"names {world.critical.code}" not in page
