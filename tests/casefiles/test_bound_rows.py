"""Custody events, testimony versions, review decisions, consent records, protection
changes and victims' status changes are bound into the audit chain: tampered with behind
the app's back (guards lifted), each deleted, altered or added row is named by
``verify_audit``."""

import uuid
from datetime import date
from types import SimpleNamespace

import pytest
from django.apps import apps as django_apps
from django.core.exceptions import PermissionDenied
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import DatabaseError, connection, transaction
from django.utils import timezone

from casefiles import bindings
from casefiles.bulk import insert_rows
from casefiles.models import AuditEntry
from evidence import services as evidence_services
from evidence.models import CustodyEvent, EvidenceItem
from legal.models import ReviewDecision
from legal.services import review
from missing.models import Antemortem, StatusChange
from missing.services import missing as missing_services
from people import services
from people.models import Consent, Person, ProtectionChange
from people.models import TestimonyVersion as Version
from tests.db_guard import guard_lifted
from tests.evidence.images import jpeg_bytes, write
from tests.factories import register_person

pytestmark = pytest.mark.django_db


def _verify():
    """Run the command as an operator would; return (exit code, message)."""
    out = SimpleNamespace(text="", write=lambda s: setattr(out, "text", out.text + s))
    out.flush = lambda: None
    try:
        call_command("verify_audit", stdout=out)
    except CommandError as exc:
        return exc.returncode, str(exc)
    return 0, out.text


@pytest.fixture
def history(cast, tmp_path, capsys):
    """What a day's work leaves: an intake, a download, a testimony revised and approved,
    a consent given and partly withdrawn, a witness's protection raised."""
    for n in range(3):
        write(tmp_path / "usb" / f"{n}.jpg", jpeg_bytes(60 + n))
    call_command(
        "ingest",
        str(tmp_path / "usb"),
        "--case",
        cast.case.reference,
        "--source",
        "Witness W-0001",
        "--as",
        cast.investigator.username,
        "--jobs",
        "1",
    )
    capsys.readouterr()
    item = EvidenceItem.objects.order_by("reference").first()
    _, result = evidence_services.open_verified(item)
    evidence_services.record_download(actor=cast.lawyer, item=item, result=result)
    witness = register_person(cast.case, cast.investigator)
    testimony = services.create_testimony(
        actor=cast.investigator,
        case=cast.case,
        witness=witness,
        text="رأيتُ الحافلة تدخل الفرع عند الفجر.",
        taken_at=timezone.now(),
        language="ar",
        mode="in_person",
        interviewers=[cast.investigator],
    )
    services.revise_testimony(
        actor=cast.investigator, testimony=testimony, text="رأيتُ حافلتين.", reason="تصحيح"
    )
    review.decide(actor=cast.investigator, record=testimony, to_status="submitted")
    review.decide(actor=cast.lawyer, record=testimony, to_status="approved")
    consent = services.record_consent(
        actor=cast.investigator,
        case=cast.case,
        person=witness,
        scopes=["investigation", "prosecution"],
        how="written",
        given_on=date(2024, 3, 1),
    )
    services.withdraw_consent(
        actor=cast.investigator,
        consent=consent,
        how="written",
        given_on=date(2024, 4, 1),
        scopes=["prosecution"],
    )
    services.change_protection(
        actor=cast.lead, person=witness, level="high", reason="threatened after the interview"
    )
    draft = services.create_testimony(  # the latest version: of a draft, still open
        actor=cast.investigator,
        case=cast.case,
        witness=witness,
        text="شهادة ثانية.",
        taken_at=timezone.now(),
        language="ar",
        mode="in_person",
        interviewers=[cast.investigator],
    )
    victim = register_person(cast.case, cast.investigator, role="victim")
    services.change_victim_status(  # before any profile: no history yet
        actor=cast.investigator, case=cast.case, person=victim, status="missing"
    )
    profile = missing_services.save_profile(  # its history opens with it: missing
        actor=cast.investigator,
        case=cast.case,
        person=victim,
        values=Antemortem(physical="Tall, slim"),
    )
    missing_services.change_status(  # kept in the history by people's hook
        actor=cast.investigator,
        case=cast.case,
        profile=profile,
        status="detained",
        reason="seen in Saydnaya by a released detainee",
    )
    return SimpleNamespace(witness=witness, testimony=testimony, draft=draft)


# One row of each bound table, the column an attacker rewrites, and how.
TABLES = {
    "custody": (CustodyEvent, "notes", "copied to a colleague"),
    "version": (Version, "text", "لم أرَ شيئاً."),
    "decision": (ReviewDecision, "comment", "approved without reading"),
    "consent": (Consent, "notes", "publication allowed"),
    "protection": (ProtectionChange, "reason", "no threat"),
    "victim status": (StatusChange, "reason", "released, the family was told"),
}


def _last(model):
    # The latest row: nothing references it (a withdrawal, not the consent it withdraws).
    return model._base_manager.order_by("-pk").first()


def test_an_untampered_database_verifies_clean_after_a_days_work(history):
    code, message = _verify()
    assert code == 0, message
    assert "bound rows OK" in message
    for model in (CustodyEvent, Version, ReviewDecision, Consent, ProtectionChange, StatusChange):
        count = model._base_manager.count()
        assert count, model
        assert f"{model._meta.db_table} {count}" in message
    # The intake's custody events are bound by its per-chunk entry, not one entry each.
    intake = AuditEntry.objects.get(action="evidence.intake")
    acquired = CustodyEvent.objects.filter(item__isnull=False, action="acquired")
    assert set(intake.details["bound"]["evidence_custodyevent"]["rows"]) == {
        str(pk) for pk in acquired.values_list("pk", flat=True)
    }


@pytest.mark.parametrize("kind", TABLES)
def test_a_deleted_row_is_named(history, kind):
    model, _, _ = TABLES[kind]
    row = _last(model)
    table = model._meta.db_table
    with guard_lifted(table), connection.cursor() as cursor:
        cursor.execute(f'DELETE FROM "{table}" WHERE id = %s', [row.pk])
    code, message = _verify()
    assert code == 1
    assert f"{table} row {row.pk}: MISSING" in message


@pytest.mark.parametrize("kind", TABLES)
def test_an_altered_row_is_named_even_with_its_own_hash_recomputed(history, kind):
    model, column, forged = TABLES[kind]
    row = _last(model)
    table = model._meta.db_table
    sets, params = f'"{column}" = %s', [forged]
    if model is Version:  # the version's own hash column, made to match
        sets += ", sha256 = %s"
        params.append(_sha256(forged))
    with guard_lifted(table), connection.cursor() as cursor:
        cursor.execute(f'UPDATE "{table}" SET {sets} WHERE id = %s', [*params, row.pk])
    code, message = _verify()
    assert code == 1
    assert f"{table} row {row.pk}: ALTERED" in message


@pytest.mark.parametrize("kind", TABLES)
def test_a_row_added_behind_the_apps_back_is_named(history, kind):
    model, column, forged = TABLES[kind]
    values = model._base_manager.filter(pk=_last(model).pk).values()[0]
    values.pop("id")
    values[column] = forged
    if model is Version:
        values.update(number=values["number"] + 1, sha256=_sha256(forged))
    with transaction.atomic():
        (added,) = insert_rows(model, [values], returning=True)  # plain SQL, no service
    code, message = _verify()
    assert code == 1
    assert f"{model._meta.db_table} row {added}: UNBOUND" in message


def _sha256(text):
    import hashlib

    return hashlib.sha256(text.encode()).hexdigest()


def test_a_chunked_fixity_sweep_binds_every_event_it_writes(history):
    evidence_services.run_fixity()
    code, message = _verify()
    assert code == 0, message
    sweep = CustodyEvent.objects.filter(action="stored", item__isnull=False)
    assert sweep.count() == 3
    bound = {
        pk
        for e in AuditEntry.objects.filter(action="evidence.fixity_results")
        for pk in e.details["bound"]["evidence_custodyevent"]["rows"]
    }
    assert {str(pk) for pk in sweep.values_list("pk", flat=True)} <= bound


def test_rows_written_before_binding_existed_are_bound_by_the_data_migration(cast):
    # Rows as an older Athar wrote them: no entry binds them.
    old = insert_rows(
        CustodyEvent,
        [
            dict(case_id=cast.case.pk, action="stored", at=timezone.now(), notes=f"old {n}")
            for n in range(3)
        ],
        returning=True,
    )
    old.sort()
    code, message = _verify()
    assert code == 1 and f"evidence_custodyevent row {old[0]}: UNBOUND" in message

    bind = bindings.bind_existing("evidence", "CustodyEvent", chunk=2)
    bind(django_apps, SimpleNamespace(connection=connection))
    consent = services.record_consent(  # and the app goes on binding what it writes
        actor=cast.investigator,
        case=cast.case,
        person=register_person(cast.case, cast.investigator),
        scopes=["investigation"],
        how="written",
        given_on=date(2024, 3, 1),
    )
    assert consent.pk

    entries = AuditEntry.objects.filter(action="audit.bind_existing")
    assert entries.count() > 1  # in chunks
    assert all(e.details["note"] == bindings.EXISTING_NOTE for e in entries)
    code, message = _verify()
    assert code == 0, message
    # From then on the old rows are held like any other.
    with guard_lifted("evidence_custodyevent"), connection.cursor() as cursor:
        cursor.execute('DELETE FROM "evidence_custodyevent" WHERE id = %s', [old[1]])
    code, message = _verify()
    assert code == 1 and f"evidence_custodyevent row {old[1]}: MISSING" in message


# -- protection level: changes only through the service, at the database too ----------


def test_a_protection_change_is_a_bound_row_and_the_level_follows_it(history, cast):
    witness = Person.objects.get(pk=history.witness.pk)
    assert witness.protection_level == "high"
    change = witness.protection_changes.get()
    assert (change.from_level, change.to_level) == ("standard", "high")
    assert change.changed_by == cast.lead
    entry = AuditEntry.objects.get(action="people.protection_change")
    assert entry.details["reason"] == "threatened after the interview"
    assert str(change.pk) in entry.details["bound"]["people_protectionchange"]["rows"]


def test_only_the_lead_lowers_a_protection_level(history, cast):
    with pytest.raises(PermissionDenied):
        services.change_protection(
            actor=cast.investigator, person=history.witness, level="standard", reason="safe now"
        )
    services.change_protection(
        actor=cast.lead, person=history.witness, level="standard", reason="left the country"
    )
    assert Person.objects.get(pk=history.witness.pk).protection_level == "standard"


def _set_level(person, level):
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            'UPDATE "people_person" SET protection_level = %s WHERE id = %s',
            [level, Person._meta.pk.get_db_prep_value(person.pk, connection)],
        )


def test_the_database_refuses_a_protection_level_changed_outside_the_service(history):
    with pytest.raises(DatabaseError, match="recorded change"):
        _set_level(history.witness, "standard")
    assert Person.objects.get(pk=history.witness.pk).protection_level == "high"


def test_a_change_record_forged_to_pass_the_guard_is_named_by_verify_audit(history, cast):
    forged = ProtectionChange.objects.create(
        person=history.witness,
        from_level="high",
        to_level="standard",
        reason="routine",
        changed_by=cast.investigator,
    )
    _set_level(history.witness, "standard")  # the guard lets it through: a row says so
    code, message = _verify()
    assert code == 1
    assert f"people_protectionchange row {forged.pk}: UNBOUND" in message


def test_custody_events_are_written_only_by_the_writer_that_binds_them(cast):
    with pytest.raises(TypeError, match="record_custody"):
        CustodyEvent.objects.create(case=cast.case, action="stored", at=timezone.now())
    assert not CustodyEvent.objects.exists()


# -- rows the app changes, each change bound (``chain_tracked``, decision 0023) -----------


def _profile_of(history):
    from missing.models import Profile

    return Profile.objects.get(person__case_roles__role="victim")


def test_victims_details_and_profiles_verify_clean_through_every_change(history, cast):
    from people.services import rotate_field_keys

    profile = _profile_of(history)
    missing_services.save_profile(  # changed again: the latest binding is the one checked
        actor=cast.investigator,
        case=cast.case,
        person=profile.person,
        values=Antemortem(physical="Tall, slim", detainee_number="4417", detention_branch="215"),
    )
    rotate_field_keys()  # new ciphertexts are the profile's new state, bound again
    code, message = _verify()
    assert code == 0, message
    assert "missing_profile 1" in message
    assert f"people_person {Person.objects.count()}" in message


def test_a_detainee_number_sealed_again_behind_the_apps_back_is_named(history, cast):
    """Someone holding the database and the field key seals another number into the
    profile (a valid ciphertext for its row and column): the reveal would show it, and
    ``verify_audit`` names the row."""
    from people import crypto

    profile = _profile_of(history)
    missing_services.save_profile(
        actor=cast.investigator,
        case=cast.case,
        person=profile.person,
        values=Antemortem(detainee_number="4417"),
    )
    assert _verify()[0] == 0
    forged = crypto.encrypt(
        "9999", crypto.associated_data("missing_profile", profile.pk, "enc_detainee_number")
    )
    type(profile).objects.filter(pk=profile.pk).update(enc_detainee_number=forged)
    code, message = _verify()
    assert code == 1
    assert f"missing_profile row {profile.pk}: ALTERED" in message


def test_a_victim_s_details_changed_behind_the_apps_back_are_named(history):
    victim = _profile_of(history).person
    Person.objects.filter(pk=victim.pk).update(last_seen_place="Released at home")
    code, message = _verify()
    assert code == 1
    assert f"people_person row {victim.pk}: ALTERED" in message


def test_a_profile_added_behind_the_apps_back_is_named(history, cast):
    """A profile written by plain SQL (no service, no entry) is UNBOUND."""
    from missing.models import Profile

    other = register_person(cast.case, cast.investigator, role="victim")
    values = Profile.objects.filter(pk=_profile_of(history).pk).values()[0]
    values.update(id=uuid.uuid4(), person_id=other.pk)
    with transaction.atomic():
        insert_rows(Profile, [values])
    code, message = _verify()
    assert code == 1
    assert f"missing_profile row {values['id']}: UNBOUND" in message
