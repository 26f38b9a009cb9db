import hashlib
import itertools
import json
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import DatabaseError, IntegrityError, connection, transaction
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

from casefiles import audit
from casefiles.models import AuditEntry
from tests.db_guard import guard_lifted
from tests.factories import CaseFactory, UserFactory

TABLE = AuditEntry._meta.db_table
pytestmark = pytest.mark.django_db


def _chain(n=5):
    user = UserFactory(username="amira")
    case = CaseFactory()
    for i in range(n):
        audit.record(user, "case.view", target=case, case=case, n=i, note=f"مشاهدة {i}")
    return user, case


def _verify():
    """Run the command as an operator would; return (exit code, message)."""
    try:
        call_command("verify_audit", stdout=(out := _Capture()))
    except CommandError as exc:
        return exc.returncode, str(exc)
    return 0, out.text


class _Capture:
    def __init__(self):
        self.text = ""

    def write(self, s):
        self.text += s

    def flush(self):
        pass


def test_entries_form_a_hash_chain_from_genesis():
    _chain(3)
    entries = list(AuditEntry.objects.order_by("seq"))
    assert [e.seq for e in entries] == [1, 2, 3]
    assert entries[0].prev_hash == "0" * 64
    for prev, entry in itertools.pairwise(entries):
        assert entry.prev_hash == prev.hash
    first = entries[0]
    doc = {
        "seq": 1,
        "at": first.at.isoformat(timespec="microseconds"),
        "actor_id": first.actor_id,
        "actor_label": "amira",
        "action": "case.view",
        "target_type": "casefiles.case",
        "target_id": str(first.case_id),
        "target_label": first.case.reference,
        "case_id": first.case_id,
        "details_sha256": hashlib.sha256(
            json.dumps(
                {"n": 0, "note": "مشاهدة 0"},
                sort_keys=True,
                separators=(",", ":"),
                ensure_ascii=False,
            ).encode()
        ).hexdigest(),
        "ip": None,
        "user_agent": "",
    }
    canonical = json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    # The documented formula, computed independently of the app's helper.
    assert first.hash == hashlib.sha256(("0" * 64 + canonical).encode()).hexdigest()


def test_verify_audit_passes_on_a_whole_chain():
    _chain(4)
    code, message = _verify()
    assert code == 0
    assert "4 entries" in message
    assert "\n" not in message.strip()


def test_an_entry_rolls_back_with_the_action_it_records():
    user = UserFactory()
    with pytest.raises(RuntimeError), transaction.atomic():
        audit.record(user, "case.view")
        raise RuntimeError("the action failed")
    assert not AuditEntry.objects.exists()


@pytest.mark.parametrize(
    "sql",
    [f'UPDATE "{TABLE}" SET action = %s', f'DELETE FROM "{TABLE}" WHERE seq = 1'],
    ids=["update", "delete"],
)
def test_raw_sql_cannot_change_or_remove_entries(sql):
    _chain(2)
    params = ["forged"] if "UPDATE" in sql else []
    with pytest.raises(DatabaseError, match="append-only"), transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
    assert AuditEntry.objects.count() == 2
    assert set(AuditEntry.objects.values_list("action", flat=True)) == {"case.view"}


def test_raw_truncate_is_refused_on_postgresql():
    if connection.vendor != "postgresql":
        pytest.skip("SQLite has no TRUNCATE")
    _chain(2)
    with pytest.raises(DatabaseError, match="append-only"), transaction.atomic():
        with connection.cursor() as cursor:
            # Check this test's own deferred foreign keys first, so TRUNCATE itself is tried.
            cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
            cursor.execute(f'TRUNCATE "{TABLE}" CASCADE')
    assert AuditEntry.objects.count() == 2


def test_the_model_refuses_update_and_delete():
    _chain(1)
    entry = AuditEntry.objects.get()
    entry.action = "forged"
    with pytest.raises(TypeError):
        entry.save()
    with pytest.raises(TypeError):
        entry.delete()
    with pytest.raises(TypeError):
        AuditEntry.objects.update(action="forged")
    with pytest.raises(TypeError):
        AuditEntry.objects.all().delete()
    with pytest.raises(TypeError, match="record"):
        AuditEntry(seq=99, at=entry.at, action="x", prev_hash="a" * 64, hash="b" * 64).save()


def test_a_row_altered_behind_the_apps_back_is_named_by_verify_audit():
    _chain(6)
    with guard_lifted(TABLE), connection.cursor() as cursor:
        cursor.execute(f'UPDATE "{TABLE}" SET actor_label = %s WHERE seq = 4', ["someone else"])
    code, message = _verify()
    assert code == 1
    assert "seq 4" in message


def test_a_deleted_middle_row_is_named_by_verify_audit():
    _chain(5)
    with guard_lifted(TABLE), connection.cursor() as cursor:
        cursor.execute(f'DELETE FROM "{TABLE}" WHERE seq = 3')
    code, message = _verify()
    assert code == 1
    assert "seq 3" in message


def test_a_fork_of_the_chain_is_impossible():
    _chain(2)
    head = AuditEntry.objects.order_by("seq").first()
    twin = AuditEntry(seq=50, at=head.at, action="fork", prev_hash=head.prev_hash, hash="f" * 64)
    twin._via_record = True
    with pytest.raises(DatabaseError), transaction.atomic():
        twin.save()


# --- any change to any stored field is detected -------------------------------------

_STORED_FIELDS = [
    "seq",
    "at",
    "actor_id",
    "actor_label",
    "action",
    "target_type",
    "target_id",
    "target_label",
    "case_id",
    "details",
    "ip",
    "user_agent",
    "prev_hash",
    "hash",
]


def _changed_value(field, current, draw, other_ids):
    """A different value for the field, of the column's type."""
    text = st.text(st.characters(codec="utf-8", exclude_characters="\x00"), max_size=40)
    if field == "seq":
        return draw(st.integers(min_value=100, max_value=10**9) | st.integers(-50, 0))
    if field == "at":
        return current + draw(
            st.timedeltas(min_value=timedelta(microseconds=1), max_value=timedelta(days=9000)).map(
                lambda d: d * draw(st.sampled_from([1, -1]))
            )
        )
    if field in {"actor_id", "case_id"}:
        return draw(st.sampled_from([None, *other_ids]).filter(lambda v: v != current))
    if field == "details":
        leaf = st.none() | st.booleans() | st.integers() | text
        value = json.dumps(draw(st.dictionaries(text, leaf, max_size=3)), sort_keys=True)
        return value if value != current else json.dumps({"x": 1})
    if field == "ip":
        ip = draw(st.ip_addresses().map(str))
        return ip if ip != current else None
    if field in {"prev_hash", "hash"}:
        return draw(
            st.text("0123456789abcdef", min_size=64, max_size=64).filter(lambda v: v != current)
        )
    value = draw(text.filter(lambda v: v != current))
    limits = {"action": 64, "target_id": 64, "target_type": 100, "user_agent": 300}
    return value[: limits.get(field, 150)] or "x"


@pytest.fixture
def stored_chain(db):
    users = [UserFactory() for _ in range(3)]
    cases = [CaseFactory() for _ in range(2)]
    for i in range(8):
        audit.record(
            users[i % 3],
            ["case.view", "membership.grant", "auth.login"][i % 3],
            target=cases[i % 2],
            case=cases[i % 2] if i % 4 else None,
            ip="192.0.2.7" if i % 2 else "2001:db8::1",
            user_agent="Mozilla/5.0",
            step=i,
            names=["ليلى", "Layla"],
        )
    return {"users": [u.pk for u in users], "cases": [c.pk for c in cases]}


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
def test_any_change_to_any_stored_field_is_detected(stored_chain, data):
    seq = data.draw(st.integers(min_value=1, max_value=8), label="seq")
    field = data.draw(st.sampled_from(_STORED_FIELDS), label="field")
    row = dict(
        zip(
            _STORED_FIELDS,
            AuditEntry.objects.filter(seq=seq).values_list(*_STORED_FIELDS).get(),
            strict=True,
        )
    )
    current = row[field]
    if field == "details":
        current = json.dumps(current, sort_keys=True)
    other_ids = stored_chain["users"] if field == "actor_id" else stored_chain["cases"]
    new = _changed_value(field, current, data.draw, other_ids)
    note(f"seq {seq}: {field} {current!r} -> {new!r}")
    refused = False
    with transaction.atomic():
        with guard_lifted(TABLE), connection.cursor() as cursor:
            try:
                with transaction.atomic():
                    cursor.execute(
                        f'UPDATE "{TABLE}" SET "{field}" = %s WHERE seq = %s', [new, seq]
                    )
            except IntegrityError:
                refused = True  # the guard is put back before the transaction is undone
        report = None if refused else audit.verify_chain()
        transaction.set_rollback(True)
    if refused:
        # A UNIQUE column (seq, prev_hash, hash) refused the forgery outright.
        assert field in {"seq", "prev_hash", "hash"}
        return
    assert not report.ok
    # The first broken link is the altered entry (or, for a new seq, where it now sits).
    assert report.broken_seq in {seq, new}
    assert audit.verify_chain().ok  # rolled back: the original chain is whole again
