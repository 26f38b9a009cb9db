"""What a package must not give away, checked again at the build (issue 30, decision
0029): a testimony's refusal names no witness's code; a person registered, or made
protected, after the approval is looked for again in each whole item's fields, and the
build withholds the row's field or refuses what cannot be withheld (the EXIF text inside
the file, the custody chain's "acquired from"); a free-text "acquired from" is checked
like the other identifying fields."""

import io
import json
from pathlib import Path
from types import SimpleNamespace

import pytest
from django.core.exceptions import ValidationError
from django.core.management import call_command
from django.utils import timezone

from disclosure import services, verifier
from disclosure.contents import review
from disclosure.exporting import WITHHELD_PROTECTED
from disclosure.models import Package
from evidence.intake.pipeline import ingest_path
from people import services as people_services
from tests.evidence.images import jpeg_bytes, write
from tests.factories import register_person

from .conftest import BODY, approve

pytestmark = pytest.mark.django_db
LATER = "Nadia Haddad"  # registered in the case only after the package is approved


def _item(world, tmp_path, path: str, data: bytes, acquired_from="S-0009"):
    write(tmp_path / "medium" / path, data)
    batch = ingest_path(
        actor=world.cast.investigator,
        case=world.case,
        path=tmp_path / "medium",
        acquired_from=acquired_from,
        jobs=1,
    ).batch
    item = batch.items.get()
    approve(item, world.cast.investigator, world.cast.lead)
    return item


def _approved(world, item, purpose="investigation"):
    package = services.request_package(
        actor=world.cast.lawyer,
        case=world.case,
        recipient=BODY,
        purpose=purpose,
        select=item.reference,
    )
    return services.approve_package(actor=world.cast.lead, package=package)


def _build(package, out: Path) -> Path:
    call_command("disclosure", "build", str(package.pk), "--out", str(out), stdout=io.StringIO())
    return out


def _everything(bag: Path) -> bytes:
    return b"\n".join(p.read_bytes() for p in sorted(bag.rglob("*")) if p.is_file())


def _row(bag: Path, item) -> dict:
    rows = json.loads((bag / "metadata/items.json").read_text(encoding="utf-8"))
    return next(r for r in rows if r["reference"] == item.reference)


def _later(world, level="critical"):
    return register_person(
        world.case, world.cast.lead, protection_level=level, name_ar="نادية حداد", name_latin=LATER
    )


def test_a_testimony_s_refusal_names_no_code_in_the_package(client, world, tmp_path):
    """The Critical witness consented to investigation only: in a package for prosecution
    her statement is refused, and package.json says why without her code (which, with
    the statement of a later package, says whose it was). The preview, for the case's
    lead, still shows whose it is."""
    package = services.request_package(
        actor=world.cast.lawyer,
        case=world.case,
        recipient=BODY,
        purpose="prosecution",
        select=f"{world.photos[1].reference},T-{world.testimonies['critical'].pk:04d}",
    )
    ref, code = f"T-{world.testimonies['critical'].pk:04d}", world.critical.code
    client.force_login(world.cast.lead)
    page = client.get(package.get_absolute_url()).content.decode()
    assert f"{ref}: The witness gave no consent for this purpose. ({code})" in page
    bag = _build(services.approve_package(actor=world.cast.lead, package=package), tmp_path / "b")
    doc = json.loads((bag / "metadata/package.json").read_text(encoding="utf-8"))
    assert doc["left_out"]["refused"] == {ref: "The witness gave no consent for this purpose."}
    # (Her code still goes as the pseudonym of the photos' source, which intake records:
    # what it must not do is say she has a statement, and that she refused.)
    assert code not in json.dumps(doc["left_out"])
    assert verifier.verify(bag)


def test_a_person_registered_after_the_approval_is_looked_for_in_the_path(world, tmp_path):
    item = _item(world, tmp_path, "Nadia/home.jpg", jpeg_bytes(41))
    package = _approved(world, item)
    assert package.contents["withheld_fields"] == {}  # no one of that name yet
    _later(world)
    bag = _build(package, tmp_path / "bag")
    assert _row(bag, item)["original_path"] == WITHHELD_PROTECTED
    assert b"Nadia" not in _everything(bag)
    assert verifier.verify(bag)


def test_a_person_made_protected_after_the_approval_is_looked_for_in_the_path(world, tmp_path):
    nadia = _later(world, level="standard")
    people_services.record_consent(
        actor=world.cast.lead,
        case=world.case,
        person=nadia,
        scopes=["investigation"],
        how="written",
        given_on=timezone.now().date(),
    )
    item = _item(world, tmp_path, "Nadia/home.jpg", jpeg_bytes(42))
    package = _approved(world, item, purpose="investigation")
    assert package.contents["withheld_fields"] == {}  # standard, and she consented
    people_services.change_protection(
        actor=world.cast.lead, person=nadia, level="high", reason="Threatened since."
    )
    bag = _build(package, tmp_path / "bag")
    assert _row(bag, item)["original_path"] == WITHHELD_PROTECTED
    assert b"Nadia" not in _everything(bag)


def test_a_name_in_the_exif_registered_after_the_approval_refuses_the_build(world, tmp_path):
    """The EXIF text goes inside the file, byte for byte: it cannot be withheld, so the
    build refuses, as the approval would have, and says why."""
    item = _item(world, tmp_path, "roll/IMG_0042.jpg", jpeg_bytes(43, model="Nadia phone"))
    package = _approved(world, item)
    _later(world)
    with pytest.raises(Exception, match="EXIF"):
        _build(package, tmp_path / "bag")
    package.refresh_from_db()
    assert package.status == Package.Status.FAILED
    assert "EXIF" in package.error and item.reference in package.error
    assert not (tmp_path / "bag" / "data").exists() or not any((tmp_path / "bag").rglob("*.jpg"))


@pytest.fixture
def brought(world, tmp_path):
    """A photo whose "acquired from" names the Critical witness's family."""
    item = _item(
        world, tmp_path, "roll/IMG_0050.jpg", jpeg_bytes(50), acquired_from="Walid's brother"
    )
    package = services.request_package(
        actor=world.cast.lawyer,
        case=world.case,
        recipient=BODY,
        purpose="investigation",
        select=item.reference,
    )
    return SimpleNamespace(item=item, package=package)


def test_acquired_from_is_checked_against_protected_names(world, brought, tmp_path):
    """It goes in the item's custody chain as recorded (its "acquired" event, bound by
    its hash): like the EXIF text it cannot be withheld, so it is kept with a reason or
    the package is not approved."""
    found = review(world.cast.lawyer, brought.package)
    assert ("acquired_from", world.critical.code) in {(m.field, m.code) for _l, m in found.matches}
    with pytest.raises(ValidationError, match="acquired from"):
        services.approve_package(actor=world.cast.lead, package=brought.package)
    reason = "The court must know the photo came through her brother."
    package = services.approve_package(
        actor=world.cast.lead,
        package=brought.package,
        kept_fields={brought.item.reference: {"acquired_from": reason}},
    )
    assert package.contents["kept_fields"] == {str(brought.item.pk): {"acquired_from": reason}}
    bag = _build(package, tmp_path / "bag")
    assert _row(bag, brought.item)["acquired_from"] == "Walid's brother"
    assert verifier.verify(bag)


def test_acquired_from_naming_someone_registered_after_the_approval_refuses_the_build(
    world, tmp_path
):
    item = _item(world, tmp_path, "roll/IMG_0051.jpg", jpeg_bytes(51), acquired_from="Nadia")
    package = _approved(world, item)
    _later(world)
    with pytest.raises(Exception, match="acquired from"):
        _build(package, tmp_path / "bag")
    package.refresh_from_db()
    assert package.status == Package.Status.FAILED and item.reference in package.error
