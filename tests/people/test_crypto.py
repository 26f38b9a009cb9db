import base64
import secrets
import time

import pytest
from django.core.management import call_command
from django.db import connection
from django.test import override_settings
from hypothesis import given
from hypothesis import strategies as st

from casefiles.models import AuditEntry
from people import crypto
from people.models import Identity, Person
from tests.factories import register_person

pytestmark = pytest.mark.django_db

NAME = "ليلى عبد الرحمن"
LATIN = "Layla Abdulrahman"


def _key(key_id):
    return (key_id, secrets.token_bytes(32))


def _reload(person):
    return Person.objects.get(pk=person.pk)


@pytest.mark.parametrize(
    "value",
    ["", "0", "ليلى 🌿 Ñ\u200f\x00 end", "a" * (1 << 20)],
    ids=["empty", "zero", "unicode", "one-megabyte"],
)
def test_identity_fields_round_trip_exactly(cast, value):
    person = register_person(cast.case, cast.investigator, name_latin="x", address=value)
    assert _reload(person).open_identity().address == value


def test_a_megabyte_value_round_trips_in_well_under_a_second(cast):
    value = "م" * (1 << 19)  # 1 MiB of UTF-8
    person = register_person(cast.case, cast.investigator, risk_notes=value)
    started = time.perf_counter()
    assert _reload(person).open_identity().risk_notes == value
    assert time.perf_counter() - started < 1.0


def test_a_ciphertext_copied_to_another_row_does_not_open(cast):
    first = register_person(cast.case, cast.investigator, name_ar=NAME)
    second = register_person(cast.case, cast.investigator, name_ar="سامر")
    Person.objects.filter(pk=second.pk).update(enc_name_ar=first.enc_name_ar)
    with pytest.raises(crypto.DecryptionError):
        _reload(second).open_identity()
    assert _reload(first).open_identity().name_ar == NAME


def test_a_ciphertext_moved_to_another_column_does_not_open(cast):
    person = register_person(cast.case, cast.investigator, name_ar=NAME, phone="+963 11 000")
    Person.objects.filter(pk=person.pk).update(enc_phone=person.enc_name_ar)
    with pytest.raises(crypto.DecryptionError):
        _reload(person).open_identity()


def test_an_altered_ciphertext_does_not_open(cast):
    person = register_person(cast.case, cast.investigator, name_ar=NAME)
    prefix, key_id, body = person.enc_name_ar.split(":")
    raw = bytearray(base64.urlsafe_b64decode(body))
    raw[-1] ^= 1
    forged = f"{prefix}:{key_id}:{base64.urlsafe_b64encode(bytes(raw)).decode()}"
    Person.objects.filter(pk=person.pk).update(enc_name_ar=forged)
    with pytest.raises(crypto.DecryptionError):
        _reload(person).open_identity()


def test_after_rotate_keys_the_old_key_can_be_removed(cast):
    old, new = _key("old"), _key("new")
    with override_settings(FIELD_KEYS=[old]):
        people = [
            register_person(cast.case, cast.investigator, name_ar=f"{NAME} {i}", phone=str(i))
            for i in range(3)
        ]
    with override_settings(FIELD_KEYS=[new, old]):
        call_command("rotate_keys", stdout=(out := _Out()))
    assert "people.Person: 3 rows" in out.text
    assert "3 re-encrypted from older keys; all under key new" in out.text
    with override_settings(FIELD_KEYS=[new]):
        for i, person in enumerate(people):
            assert _reload(person).open_identity() == Identity(name_ar=f"{NAME} {i}", phone=str(i))
            assert crypto.key_id_of(_reload(person).enc_name_ar) == "new"
    chunk = AuditEntry.objects.get(action="people.reseal")
    assert chunk.details == {"key_id": "new", "model": "people.Person", "rows": 3, "reencrypted": 3}
    done = AuditEntry.objects.get(action="people.rotate_keys")  # the last entry of the rotation
    assert done.seq > chunk.seq
    assert (done.details["rows"]["people.Person"], done.details["reencrypted"]) == (3, 3)


def test_rotation_goes_in_chunks_each_with_its_audit_entry(cast):
    old, new = _key("old"), _key("new")
    with override_settings(FIELD_KEYS=[old]):
        people = [
            register_person(cast.case, cast.investigator, name_ar=f"{NAME} {i}") for i in range(5)
        ]
    with override_settings(FIELD_KEYS=[new, old]):
        call_command("rotate_keys", "--batch-size", "2", stdout=(out := _Out()))
    assert "5 rows in 3 chunks" in out.text
    entries = AuditEntry.objects.filter(action="people.reseal").order_by("seq")
    assert [e.details["rows"] for e in entries] == [2, 2, 1]
    with override_settings(FIELD_KEYS=[new]):
        assert {_reload(p).open_identity().name_ar for p in people} == {
            f"{NAME} {i}" for i in range(5)
        }


def test_rotation_is_idempotent(cast):
    from people import services

    old, new = _key("old"), _key("new")
    with override_settings(FIELD_KEYS=[old]):
        person = register_person(cast.case, cast.investigator, name_ar=NAME, phone="1")
    with override_settings(FIELD_KEYS=[new, old]):
        first = services.rotate_field_keys()
        again = services.rotate_field_keys()
    assert (first.people, first.reencrypted) == (1, 1)
    assert (again.people, again.reencrypted) == (1, 0)  # nothing left on the old key
    with override_settings(FIELD_KEYS=[new]):
        assert _reload(person).open_identity() == Identity(name_ar=NAME, phone="1")


def test_a_rotation_stopped_halfway_keeps_its_chunks_and_a_rerun_completes_it(cast, monkeypatch):
    from people import services
    from people.services import rotation

    old, new = _key("old"), _key("new")
    with override_settings(FIELD_KEYS=[old]):
        people = [
            register_person(cast.case, cast.investigator, name_ar=f"{NAME} {i}") for i in range(5)
        ]
    real, done = rotation._rotate_chunk, []

    def killed_after_the_first_chunk(*args, **kwargs):
        if done:
            raise KeyboardInterrupt
        rows, *rest = real(*args, **kwargs)
        done.extend([rows] if rows else [])
        return rows, *rest

    monkeypatch.setattr(rotation, "_rotate_chunk", killed_after_the_first_chunk)
    with override_settings(FIELD_KEYS=[new, old]), pytest.raises(KeyboardInterrupt):
        services.rotate_field_keys(batch_size=2)
    keys = sorted(crypto.key_id_of(_reload(p).enc_name_ar) for p in people)
    assert keys == ["new", "new", "old", "old", "old"]  # the first chunk is durable
    assert AuditEntry.objects.filter(action="people.reseal").count() == 1
    assert not AuditEntry.objects.filter(action="people.rotate_keys").exists()  # not finished

    monkeypatch.setattr(rotation, "_rotate_chunk", real)
    with override_settings(FIELD_KEYS=[new, old]):
        report = services.rotate_field_keys(batch_size=2)
    assert (report.people, report.reencrypted) == (5, 3)
    with override_settings(FIELD_KEYS=[new]):
        assert [_reload(p).open_identity().name_ar for p in people] == [
            f"{NAME} {i}" for i in range(5)
        ]


def test_without_the_key_that_sealed_them_values_do_not_open(cast):
    with override_settings(FIELD_KEYS=[_key("a")]):
        person = register_person(cast.case, cast.investigator, name_ar=NAME)
    with override_settings(FIELD_KEYS=[_key("b")]), pytest.raises(crypto.DecryptionError):
        _reload(person).open_identity()


def _dump_all_tables() -> str:
    """Every row of every table, as text, the way a stolen backup could be read."""
    chunks = []
    with connection.cursor() as cursor:
        for table in connection.introspection.table_names(cursor):
            cursor.execute(f"SELECT * FROM {connection.ops.quote_name(table)}")
            for row in cursor.fetchall():
                chunks.append(" ".join(map(str, row)))
    return "\n".join(chunks)


def test_the_database_holds_no_plaintext_identity(cast):
    person = register_person(
        cast.case,
        cast.investigator,
        name_ar=NAME,
        name_latin=LATIN,
        aliases="أبو سامر\nUmm Samer",
        phone="+963944123456",
        address="حي الميدان، دمشق",
        risk_notes="Brother still detained in branch",
    )
    dump = _dump_all_tables()
    assert person.code in dump  # the dump is real: it holds the pseudonym
    for secret in [
        NAME,
        "عبد الرحمن",
        LATIN,
        "Abdulrahman",
        "أبو سامر",
        "Umm Samer",
        "963944123456",
        "الميدان",
        "still detained",
    ]:
        assert secret not in dump
        assert secret.casefold() not in dump.casefold()


class _Out:
    def __init__(self):
        self.text = ""

    def write(self, s):
        self.text += s

    def flush(self):
        pass


def test_rotate_keys_changes_nothing_when_a_value_does_not_open(cast):
    from django.core.management.base import CommandError

    old = _key("old")
    with override_settings(FIELD_KEYS=[old]):
        kept = register_person(cast.case, cast.investigator, name_ar=NAME)
    with override_settings(FIELD_KEYS=[_key("lost")]):
        lost = register_person(cast.case, cast.investigator, name_ar="سامر")
    # Every value is opened before any chunk is written: one row a chunk, whichever
    # comes first, nothing changes.
    with override_settings(FIELD_KEYS=[_key("new"), old]), pytest.raises(CommandError):
        call_command("rotate_keys", "--batch-size", "1", stdout=_Out())
    assert _reload(kept).enc_name_ar == kept.enc_name_ar
    assert _reload(lost).enc_name_ar == lost.enc_name_ar
    assert not AuditEntry.objects.filter(
        action__in=["people.reseal", "people.rotate_keys"]
    ).exists()


def test_rotate_keys_rebuilds_the_name_index_under_a_new_index_key(cast):
    from people import services

    person = register_person(cast.case, cast.investigator, name_ar=NAME)
    with override_settings(BLIND_INDEX_KEY=secrets.token_bytes(32)):
        lookup = {"actor": cast.investigator, "case": cast.case, "name": NAME}
        assert services.find_people_by_name(**lookup) == []
        call_command("rotate_keys", stdout=_Out())
        assert services.find_people_by_name(**lookup) == [person]


@given(st.text(max_size=300), st.sampled_from(["enc_name_ar", "enc_phone"]))
def test_any_text_round_trips_and_opens_only_where_it_was_sealed(value, column):
    aad = crypto.associated_data("people_person", "row-a", column)
    token = crypto.encrypt(value, aad)
    assert crypto.decrypt(token, aad) == value
    with pytest.raises(crypto.DecryptionError):
        crypto.decrypt(token, crypto.associated_data("people_person", "row-b", column))


def test_rotate_keys_refuses_a_batch_size_below_one(cast):
    from django.core.management.base import CommandError

    register_person(cast.case, cast.investigator, name_ar=NAME)
    with pytest.raises(CommandError, match="at least 1"):
        call_command("rotate_keys", "--batch-size", "0", stdout=_Out())
    assert not AuditEntry.objects.filter(
        action__in=["people.reseal", "people.rotate_keys"]
    ).exists()
