"""Custody recorded by hand (transfer, return, analysis, storage move) and the item page's
account of custody: fixity sweeps folded into one line, the acquisition said against what."""

from datetime import timedelta
from pathlib import Path

import pytest
from django.urls import reverse
from django.utils import timezone

from casefiles.models import AuditEntry
from evidence import services
from evidence.intake.pipeline import ingest_path
from evidence.models import CustodyEvent, EvidenceItem
from evidence.storage import evidence_storage
from tests.evidence.conftest import sha256
from tests.evidence.helpers import take_in
from tests.evidence.images import jpeg_bytes, write
from tests.factories import register_person
from tests.html import page_text, shows

pytestmark = pytest.mark.django_db

TRANSFER = {
    "action": "transferred",
    "at": "",
    "from_custodian": "Investigator A. (field office)",
    "to_custodian": "Evidence room, The Hague",
    "location": "Gaziantep",
    "purpose": "handed over for safekeeping",
    "notes": "sealed bag 17",
}


@pytest.fixture
def photo(cast, tmp_path):
    batch = take_in(cast.case, cast.investigator, {"body.jpg": jpeg_bytes(5)}, tmp_path / "m")
    return batch.items.select_related("original").get()


def _url(item):
    return reverse("evidence:custody_create", args=[item.case.reference, item.reference])


def _tamper(item, data=b"tampered"):
    path = Path(evidence_storage().path(item.original.storage_key))
    path.chmod(0o644)
    path.write_bytes(data)
    return path


def test_an_investigator_records_a_transfer_and_the_original_is_re_hashed(client, cast, photo):
    client.force_login(cast.investigator)
    response = client.post(_url(photo), TRANSFER, follow=True)
    event = CustodyEvent.objects.get(item=photo, action="transferred")
    assert (event.actor, event.from_custodian, event.to_custodian) == (
        cast.investigator,
        "Investigator A. (field office)",
        "Evidence room, The Hague",
    )
    assert (event.location, event.purpose, event.notes) == (
        "Gaziantep",
        "handed over for safekeeping",
        "sealed bag 17",
    )
    assert (event.sha256, event.hash_result) == (photo.original.sha256, "match")
    assert abs(event.at - timezone.now()) < timedelta(minutes=1)
    photo.refresh_from_db()
    assert photo.integrity == "verified"
    entry = AuditEntry.objects.get(action="evidence.custody")
    assert (entry.actor, entry.target_id, entry.case) == (
        cast.investigator,
        str(photo.pk),
        cast.case,
    )
    assert entry.details["custody_action"] == "transferred"
    assert entry.details["hash_result"] == "match"
    assert list(entry.details["bound"]["evidence_custodyevent"]["rows"]) == [str(event.pk)]
    html = response.content.decode()
    assert response.redirect_chain[-1][0].endswith("#custody")
    assert "Recorded. The original was re-hashed and matches its hash." in html
    assert "Transferred" in html and "Evidence room, The Hague" in html and "sealed bag 17" in html


def test_a_transfer_of_a_changed_original_records_the_mismatch_loudly_and_fixes_nothing(
    client, cast, photo
):
    path = _tamper(photo)
    client.force_login(cast.lead)
    response = client.post(
        _url(photo),
        {"action": "stored", "location": "Safe 2, shelf 4", "at": ""},
        follow=True,
    )
    event = CustodyEvent.objects.get(item=photo, action="stored")
    assert (event.sha256, event.hash_result) == (photo.original.sha256, "mismatch")
    assert event.notes == f"found sha256 {sha256(b'tampered')}"
    photo.refresh_from_db()
    assert photo.integrity == "changed"
    assert path.read_bytes() == b"tampered"  # nothing is put back or rehashed into place
    entry = AuditEntry.objects.get(action="evidence.custody")
    assert entry.details["hash_result"] == "mismatch"
    assert entry.details["found"] == f"found sha256 {sha256(b'tampered')}"
    html = response.content.decode()
    assert "Recorded with HASH MISMATCH" in html and 'class="error"' in html
    assert "HASH MISMATCH" in html.split('id="custody"')[1]

    path.unlink()
    client.post(_url(photo), {"action": "analysed", "purpose": "wound pattern"})
    assert CustodyEvent.objects.get(item=photo, action="analysed").hash_result == "missing"
    photo.refresh_from_db()
    assert photo.integrity == "missing"


def test_only_leads_and_investigators_record_custody(client, cast, photo):
    for user in (cast.lawyer, cast.observer, cast.outsider, cast.admin):
        client.force_login(user)
        assert client.get(_url(photo)).status_code == 404
        assert client.post(_url(photo), TRANSFER).status_code == 404
        if user in (cast.lawyer, cast.observer):
            assert _url(photo) not in client.get(photo.get_absolute_url()).content.decode()
    assert not CustodyEvent.objects.filter(action="transferred").exists()
    for user in (cast.lead, cast.investigator):
        client.force_login(user)
        assert _url(photo) in client.get(photo.get_absolute_url()).content.decode()
        assert client.get(_url(photo)).status_code == 200


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"to_custodian": ""}, "to_custodian"),
        ({"action": "returned", "to_custodian": "  "}, "to_custodian"),
        ({"action": "stored", "location": ""}, "location"),
        ({"action": "analysed", "purpose": ""}, "purpose"),
        ({"action": "acquired"}, "action"),  # the app records acquisitions itself
        ({"at": "2999-01-01T10:00"}, "at"),
        ({"at": "2001-01-01T10:00"}, "at"),  # before the item was taken in
        ({"at": "not a date"}, "at"),
        ({"purpose": "fixity check #3"}, "purpose"),  # the sweep's own words
    ],
)
def test_a_rejected_custody_event_keeps_what_was_typed_and_records_nothing(
    client, cast, photo, changes, field
):
    client.force_login(cast.investigator)
    response = client.post(_url(photo), {**TRANSFER, **changes})
    assert response.status_code == 200
    assert response.context["form"].errors.keys() == {field}
    assert "sealed bag 17" in response.content.decode()
    assert not CustodyEvent.objects.exclude(action="acquired").exists()
    assert not AuditEntry.objects.filter(action="evidence.custody").exists()


def test_a_custody_event_in_the_past_is_kept_at_its_time(client, cast, photo):
    client.force_login(cast.investigator)
    when = timezone.now() - timedelta(minutes=5)
    photo.created_at = when - timedelta(minutes=1)
    EvidenceItem.objects.filter(pk=photo.pk).update(created_at=photo.created_at)
    client.post(_url(photo), {**TRANSFER, "at": when.strftime("%Y-%m-%dT%H:%M")})
    event = CustodyEvent.objects.get(action="transferred")
    assert event.at == when.replace(second=0, microsecond=0)


def test_the_service_records_only_what_a_person_may_state(cast, photo):
    with pytest.raises(ValueError, match="recorded by the app itself"):
        services.record_custody_event(actor=cast.lead, item=photo, action="copied")
    assert not AuditEntry.objects.filter(action="evidence.custody").exists()


def test_recording_custody_speaks_arabic(client, cast, photo):
    client.force_login(cast.investigator)
    client.post(reverse("set_language"), {"language": "ar", "next": "/"})
    form = client.get(_url(photo)).content.decode()
    assert 'dir="rtl"' in form and "حيازة" in form and "ماذا جرى" in form
    rejected = client.post(_url(photo), {**TRANSFER, "to_custodian": ""}).content.decode()
    assert "مطلوب لهذا النوع من الأحداث." in rejected
    done = client.post(_url(photo), TRANSFER, follow=True).content.decode()
    assert "سُجّل. أُعيد حساب بصمة الأصل وهي مطابقة." in done
    assert "تسجيل نقل أو إعادة أو تحليل أو نقل في الحفظ" in done
    _tamper(photo)
    changed = client.post(_url(photo), TRANSFER, follow=True).content.decode()
    assert "سُجّل مع عدم تطابق البصمة" in changed


# -- the item page's account of custody ---------------------------------------------------
def _custody_section(html):
    return html.split('id="custody"')[1].split("</section>")[0]


def test_repeated_fixity_checks_fold_into_one_line(client, cast, photo):
    for _ in range(12):
        services.run_fixity(case=cast.case)
    last = CustodyEvent.objects.filter(item=photo).latest("at", "pk").at
    client.force_login(cast.lawyer)
    section = _custody_section(client.get(photo.get_absolute_url()).content.decode())
    assert "fixity check #" not in section
    assert f"Fixity checked 12 times, last on {last:%Y-%m-%d %H:%M}, all matched." in page_text(
        section
    )
    assert section.count("<li") == 1  # the acquisition, and the summary beside it

    client.post(reverse("set_language"), {"language": "ar", "next": "/"})
    arabic = _custody_section(client.get(photo.get_absolute_url()).content.decode())
    assert f"فحوص السلامة: 12، آخرها في {last:%Y-%m-%d %H:%M}، وكلها مطابقة." in page_text(arabic)


def test_a_fixity_check_that_did_not_match_is_said_and_shown(client, cast, photo):
    for _ in range(3):
        services.run_fixity(case=cast.case)
    _tamper(photo)
    services.run_fixity(case=cast.case)
    client.force_login(cast.lawyer)
    section = _custody_section(client.get(photo.get_absolute_url()).content.decode())
    assert "Fixity checked 4 times, last on " in section
    assert ": 1 did NOT match (shown in the chain above)." in section
    assert "all matched" not in section
    # The check that found the change stands in the chain as its own event.
    (mismatch,) = CustodyEvent.objects.filter(item=photo, hash_result="mismatch")
    assert section.count("<li") == 2 and section.count("HASH MISMATCH") == 1
    assert f"fixity check #{mismatch.purpose.rsplit('#')[1]}" in section

    client.post(reverse("set_language"), {"language": "ar", "next": "/"})
    arabic = _custody_section(client.get(photo.get_absolute_url()).content.decode())
    assert "فحوص السلامة: 4، آخرها في " in arabic and "؛ 1 منها غير مطابقة" in arabic


@pytest.fixture
def listed(cast, tmp_path):
    """Two photos taken in against a custodian's list that has one of them wrong, and a
    third the list does not name."""
    files = {"good.jpg": jpeg_bytes(21), "bad.jpg": jpeg_bytes(22), "extra.jpg": jpeg_bytes(23)}
    for name, data in files.items():
        write(tmp_path / "m" / name, data)
    sums = tmp_path / "SHA256SUMS"
    sums.write_text(f"{sha256(files['good.jpg'])}  good.jpg\n{'0' * 64}  bad.jpg\n")
    ingest_path(
        actor=cast.investigator,
        case=cast.case,
        path=tmp_path / "m",
        acquired_from="W-0001",
        jobs=1,
        custodian_manifest=sums,
    )
    return {i.original_path: i for i in EvidenceItem.objects.all()}


def test_an_acquisition_says_against_what_its_hash_was_checked(client, cast, listed):
    client.force_login(cast.lawyer)
    pages = {
        name: _custody_section(client.get(item.get_absolute_url()).content.decode())
        for name, item in listed.items()
    }
    for section in pages.values():
        assert "hash computed at intake" in section and "hash matches" not in section
    assert "matches the custodian's list (SHA256)" in pages["good.jpg"]
    assert "DIFFERS from the custodian's list (SHA256)" in pages["bad.jpg"]
    assert "0" * 64 in pages["bad.jpg"]
    assert "matches the custodian" not in pages["bad.jpg"]
    assert "not on the custodian's list" in pages["extra.jpg"]

    client.post(reverse("set_language"), {"language": "ar", "next": "/"})
    arabic = _custody_section(client.get(listed["bad.jpg"].get_absolute_url()).content.decode())
    assert "حُسبت البصمة عند الاستلام" in arabic and "تختلف عن قائمة الحائز (SHA256)" in arabic


def test_an_acquisition_without_a_custodians_list_names_none(client, cast, photo):
    client.force_login(cast.lawyer)
    section = _custody_section(client.get(photo.get_absolute_url()).content.decode())
    assert "hash computed at intake" in section and "custodian" not in section


# -- identifications on near-identical photos -----------------------------------------------
def test_an_identification_is_shown_on_the_near_identical_photos_too(client, cast, tmp_path):
    files = {
        "body.jpg": jpeg_bytes(0),
        "body-again.jpg": jpeg_bytes(0, quality=70),  # near-identical
        "other.jpg": jpeg_bytes(3),
    }
    batch = take_in(cast.case, cast.investigator, files, tmp_path / "m")
    items = {i.original_path: i for i in batch.items.all()}
    assert items["body.jpg"].near_group == items["body-again.jpg"].near_group is not None
    mother = register_person(cast.case, cast.investigator, name_ar="أم يوسف")
    son = register_person(cast.case, cast.investigator, role="victim", name_ar="يوسف")
    services.record_identification(
        actor=cast.investigator,
        item=items["body.jpg"],
        witness=mother,
        identified=son,
        confidence="certain",
        method="photo",
        identified_on=timezone.localdate(),
        notes="",
    )
    client.force_login(cast.lawyer)
    ref = items["body.jpg"].reference
    near = client.get(items["body-again.jpg"].get_absolute_url()).content.decode()
    assert son.code in near and mother.code in near
    assert (
        f'identified on <a href="{items["body.jpg"].get_absolute_url()}">{ref}</a> '
        "(near-identical photo)"
    ) in near
    own = client.get(items["body.jpg"].get_absolute_url()).content.decode()
    assert son.code in own and "near-identical photo)" not in own
    other = client.get(items["other.jpg"].get_absolute_url())
    assert not shows(other, son.code)

    client.post(reverse("set_language"), {"language": "ar", "next": "/"})
    arabic = client.get(items["body-again.jpg"].get_absolute_url()).content.decode()
    assert f'تعرّف عليه في <a href="{items["body.jpg"].get_absolute_url()}">{ref}</a>' in arabic
