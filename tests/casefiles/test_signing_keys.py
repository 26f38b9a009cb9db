"""The organisation's signing keys: one fingerprint (the documented openssl line), the
keys listed on a page, at /.well-known/athar-signing-keys and by a command, and a
rotation that keeps the old key listed with its dates."""

import subprocess

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from casefiles import checkpoints


def test_the_fingerprint_is_what_the_documented_openssl_command_prints(tmp_path):
    public = Ed25519PrivateKey.generate().public_key()
    (tmp_path / "public-key.pem").write_text(checkpoints.public_pem(public))
    result = subprocess.run(
        ["sh", "-c", checkpoints.FINGERPRINT_COMMAND],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    )
    printed = result.stdout.split()[0]
    assert checkpoints.fingerprint(public) == printed
    assert checkpoints.fingerprint(checkpoints.public_pem(public)) == printed
    assert len(printed) == 64 and printed == printed.lower()
    # Not the SHA-256 of the 32 raw bytes, the other definition the project once had.
    import hashlib

    assert printed != hashlib.sha256(public.public_bytes_raw()).hexdigest()


# The list of keys -------------------------------------------------------------------------

import json  # noqa: E402
from io import StringIO  # noqa: E402

import pytest  # noqa: E402
from cryptography.hazmat.primitives import serialization  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.core.management.base import CommandError  # noqa: E402
from django.db import connection  # noqa: E402
from django.test.utils import CaptureQueriesContext  # noqa: E402

from casefiles import audit, services  # noqa: E402
from casefiles.models import AuditEntry, SigningKey  # noqa: E402


def _pem(private):
    return private.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()


def _checkpoint(tmp_path):
    audit.record(None, "test.event")
    return services.publish_audit_checkpoint(out=tmp_path / "out")[0]


@pytest.fixture
def rotated(db, settings, unlisted_key, tmp_path):
    """Two checkpoints with the first key, then ATHAR_CHECKPOINT_KEY rotated and one more."""
    first = unlisted_key
    _checkpoint(tmp_path)
    _checkpoint(tmp_path)
    second = Ed25519PrivateKey.generate()
    settings.ATHAR_CHECKPOINT_KEY = _pem(second)
    _checkpoint(tmp_path)
    return first, second


def test_a_rotation_lists_the_new_key_and_keeps_the_old_one_with_its_dates(rotated):
    first, second = rotated
    old, new = SigningKey.objects.order_by("first_used_at")
    assert old.fingerprint == checkpoints.fingerprint(first.public_key())
    assert new.fingerprint == checkpoints.fingerprint(second.public_key())
    assert old.retired_at == new.first_used_at and new.retired_at is None
    assert old.first_used_at < old.last_used_at <= old.retired_at
    assert services.current_signing_key() == new
    # Audited: the first key's first use, and the rotation naming the retired key.
    entries = AuditEntry.objects.filter(action__startswith="audit.signing_key").order_by("seq")
    assert [(e.action, e.details) for e in entries] == [
        ("audit.signing_key_added", {"fingerprint": old.fingerprint}),
        (
            "audit.signing_key_rotated",
            {"fingerprint": new.fingerprint, "retired": [old.fingerprint]},
        ),
    ]


def test_a_retired_key_never_signs_again(rotated, settings, tmp_path):
    first, _second = rotated
    settings.ATHAR_CHECKPOINT_KEY = _pem(first)
    audit.record(None, "test.event")
    with pytest.raises(CommandError, match="retired on"):
        call_command("audit_checkpoint", "--out", str(tmp_path / "out"))
    assert SigningKey.objects.filter(retired_at__isnull=True).get().fingerprint == (
        checkpoints.fingerprint(_second.public_key())
    )


def test_the_well_known_list_is_public_and_holds_the_keys_only(rotated, client):
    first, second = rotated
    response = client.get("/.well-known/athar-signing-keys")
    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
    data = json.loads(response.content)
    assert set(data) == {
        "format",
        "origin",
        "fingerprint_definition",
        "fingerprint_command",
        "keys",
    }
    assert data["fingerprint_command"] == checkpoints.FINGERPRINT_COMMAND
    assert [(k["fingerprint"], k["status"]) for k in data["keys"]] == [
        (checkpoints.fingerprint(second.public_key()), "current"),
        (checkpoints.fingerprint(first.public_key()), "retired"),
    ]
    for k in data["keys"]:
        assert set(k) == {
            "fingerprint",
            "public_key",
            "status",
            "first_used",
            "last_used",
            "retired_at",
        }
        assert checkpoints.fingerprint(k["public_key"]) == k["fingerprint"]
    assert "sessionid" not in response.cookies
    assert client.post("/.well-known/athar-signing-keys").status_code == 405


def test_the_page_lists_the_keys_in_both_languages(
    rotated, client, settings, tmp_path, django_assert_num_queries
):
    from tests.factories import UserFactory

    client.force_login(UserFactory(username="reader"))
    for language, heading, retired in (
        ("en", "Signing keys", "Retired: no longer signs"),
        ("ar", "مفاتيح التوقيع", "متقاعد"),
    ):
        client.cookies["django_language"] = language
        response = client.get("/keys/")
        page = response.content.decode()
        assert response.status_code == 200
        assert heading in page and retired in page
        assert checkpoints.FINGERPRINT_COMMAND.replace(">", "&gt;") in page
        for key in rotated:
            assert checkpoints.fingerprint(key.public_key()) in page
        assert ' dir="rtl"' in page if language == "ar" else ' dir="ltr"' in page
        assert "style=" not in page and "<script" not in page
    with CaptureQueriesContext(connection) as queries:
        client.get("/keys/")
    # The session and its user, then one read of the keys, however many there are.
    assert [q["sql"] for q in queries if "signingkey" in q["sql"].lower()] != []
    count = len(queries)
    settings.ATHAR_CHECKPOINT_KEY = _pem(Ed25519PrivateKey.generate())
    _checkpoint(tmp_path)
    with django_assert_num_queries(count):
        assert client.get("/keys/").content.decode().count('class="hash"') == 3


def test_signing_key_show_prints_each_fingerprint_and_the_command(rotated):
    out = StringIO()
    call_command("signing_key", "show", stdout=out)
    lines = out.getvalue().splitlines()
    first, second = rotated
    assert [line.split()[:2] for line in lines[:2]] == [
        [checkpoints.fingerprint(second.public_key()), "current"],
        [checkpoints.fingerprint(first.public_key()), "retired"],
    ]
    assert lines[-1].endswith(checkpoints.FINGERPRINT_COMMAND)


def test_the_page_is_for_signed_in_users_only(db, client):
    response = client.get("/keys/")
    assert response.status_code == 302 and "/login" in response["Location"]
