import base64
import hashlib
import os
import secrets
import stat
import subprocess
import sys

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from django.conf import settings
from django.contrib.auth.hashers import make_password
from django.test import override_settings

from casefiles.checks import check_csp, check_password_hashers
from tests.scratch_db import ROOT, run_manage

PRODUCTION_KEY = secrets.token_urlsafe(50)
CHECKPOINT_KEY = (
    Ed25519PrivateKey.generate()
    .private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    .decode()
)
FIELD_KEYS = ",".join(
    f"{key_id}:{base64.urlsafe_b64encode(secrets.token_bytes(32)).decode()}"
    for key_id in ("2026b", "2026a")
)
BLIND_INDEX_KEY = base64.urlsafe_b64encode(secrets.token_bytes(32)).decode()


def _production_env(tmp_path, **extra):
    env = {
        k: v for k, v in os.environ.items() if not k.startswith("ATHAR_") and k != "DATABASE_URL"
    }
    env.update(
        ATHAR_ENV="production",
        ATHAR_SECRET_KEY=PRODUCTION_KEY,
        ATHAR_ALLOWED_HOSTS="athar.example.org",
        ATHAR_CHECKPOINT_KEY=CHECKPOINT_KEY,
        ATHAR_FIELD_KEYS=FIELD_KEYS,
        ATHAR_BLIND_INDEX_KEY=BLIND_INDEX_KEY,
        ATHAR_DATA_DIR=str(tmp_path),
        DATABASE_URL=f"sqlite:///{tmp_path / 'prod.sqlite3'}",
    )
    env.update(extra)
    return {k: v for k, v in env.items() if v is not None}


def _admins(env, *usernames):
    env = {**env, "DJANGO_SUPERUSER_PASSWORD": "a long passphrase for the admin 42"}
    for username in usernames:
        run_manage(
            env,
            "createsuperuser",
            "--noinput",
            "--username",
            username,
            "--email",
            f"{username}@example.org",
        )


def test_production_profile_passes_check_deploy_at_warning_level(tmp_path):
    env = _production_env(tmp_path)
    run_manage(env, "migrate", "--no-input")
    _admins(env, "first", "second")  # the installer's first steps (README: two admins)
    result = run_manage(env, "check", "--deploy", "--fail-level", "WARNING", check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


def test_check_deploy_warns_of_an_installation_with_fewer_than_two_admins(tmp_path):
    env = _production_env(tmp_path)
    run_manage(env, "migrate", "--no-input")
    _admins(env, "first")
    result = run_manage(env, "check", "--deploy", check=False)
    assert "athar.W001" in result.stderr + result.stdout
    assert "1 system admin(s)" in result.stderr + result.stdout


@pytest.mark.parametrize(
    "missing",
    [
        "ATHAR_SECRET_KEY",
        "ATHAR_ALLOWED_HOSTS",
        "ATHAR_CHECKPOINT_KEY",
        "ATHAR_FIELD_KEYS",
        "ATHAR_BLIND_INDEX_KEY",
    ],
)
def test_production_refuses_to_start_without_its_secrets(tmp_path, missing):
    result = run_manage(_production_env(tmp_path, **{missing: None}), "check", check=False)
    assert result.returncode != 0
    assert missing in result.stderr
    assert not list(tmp_path.iterdir())  # no development key of any kind in production


@pytest.mark.parametrize(
    "keys",
    ["k1:c2hvcnQ=", "bad id!:" + base64.urlsafe_b64encode(bytes(32)).decode(), "k1:" + "A" * 43],
    ids=["short-key", "bad-id", "not-base64-32-bytes"],
)
def test_production_refuses_malformed_field_keys(tmp_path, keys):
    result = run_manage(_production_env(tmp_path, ATHAR_FIELD_KEYS=keys), "check", check=False)
    assert result.returncode != 0
    assert "ATHAR_FIELD_KEYS" in result.stderr


def test_demo_data_never_loads_in_production(tmp_path):
    env = _production_env(tmp_path)
    run_manage(env, "migrate", "--no-input")
    result = run_manage(env, "seed_demo", check=False)
    assert result.returncode != 0
    assert "never loaded in production" in result.stderr


def test_the_development_secret_key_is_generated_once_and_kept_private(tmp_path):
    env = {**os.environ, "ATHAR_DATA_DIR": str(tmp_path)}
    env.pop("ATHAR_SECRET_KEY", None)
    script = (
        "import hashlib; from django.conf import settings; "
        "print(hashlib.sha256(settings.SECRET_KEY.encode()).hexdigest())"
    )
    first = run_manage(env, "shell", "--no-imports", "-c", script).stdout.split()[-1]
    second = run_manage(env, "shell", "--no-imports", "-c", script).stdout.split()[-1]
    key_file = tmp_path / "secret_key"
    assert first == second == hashlib.sha256(key_file.read_text().encode()).hexdigest()
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600


def test_development_identity_keys_are_generated_once_and_kept_private(tmp_path):
    env = {**os.environ, "ATHAR_DATA_DIR": str(tmp_path)}
    env.pop("ATHAR_FIELD_KEYS", None)
    env.pop("ATHAR_BLIND_INDEX_KEY", None)
    script = (
        "import hashlib; from django.conf import settings; "
        "print(hashlib.sha256(repr((settings.FIELD_KEYS, settings.BLIND_INDEX_KEY))"
        ".encode()).hexdigest())"
    )
    first = run_manage(env, "shell", "--no-imports", "-c", script).stdout.split()[-1]
    second = run_manage(env, "shell", "--no-imports", "-c", script).stdout.split()[-1]
    assert first == second
    for name in ("field_keys", "blind_index_key"):
        assert stat.S_IMODE((tmp_path / name).stat().st_mode) == 0o600


def test_passwords_are_hashed_with_argon2():
    assert settings.PASSWORD_HASHERS[0].endswith("Argon2PasswordHasher")
    assert make_password("a long passphrase").startswith("argon2")
    assert check_password_hashers(None) == []
    with override_settings(PASSWORD_HASHERS=settings.PASSWORD_HASHERS[1:]):
        assert [e.id for e in check_password_hashers(None)] == ["athar.E004"]


def test_the_csp_check_catches_a_missing_or_loose_policy():
    assert check_csp(None) == []
    without = [m for m in settings.MIDDLEWARE if not m.endswith("ContentSecurityPolicyMiddleware")]
    with override_settings(MIDDLEWARE=without):
        assert [e.id for e in check_csp(None)] == ["athar.E001"]
    loose = {"default-src": ["*"], "script-src": ["'self'", "'unsafe-inline'"]}
    with override_settings(SECURE_CSP=loose):
        assert [e.id for e in check_csp(None)] == ["athar.E002", "athar.E003"]


@pytest.mark.parametrize("entry", ["athar.wsgi", "athar.asgi"])
def test_the_served_entry_points_default_to_production(tmp_path, entry):
    """gunicorn or uvicorn without ATHAR_ENV: refused for want of secrets, never DEBUG on."""
    load = [
        sys.executable,
        "-c",
        f"import {entry}; from django.conf import settings; "
        "print('DEBUG', settings.DEBUG, settings.PRODUCTION)",
    ]
    forgotten = _production_env(tmp_path, ATHAR_ENV=None, ATHAR_SECRET_KEY=None)
    refused = subprocess.run(load, env=forgotten, cwd=ROOT, capture_output=True, text=True)
    assert refused.returncode != 0
    assert "ATHAR_SECRET_KEY" in refused.stderr
    served = subprocess.run(
        load,
        env=_production_env(tmp_path, ATHAR_ENV=None),
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert served.stdout.strip() == "DEBUG False True", served.stderr
    asked = subprocess.run(
        load,
        env=_production_env(tmp_path, ATHAR_ENV="development"),
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert asked.stdout.strip() == "DEBUG True False", asked.stderr  # asked for: development


def test_a_timestamp_authority_without_its_certificates_refuses_to_start(tmp_path):
    env = _production_env(tmp_path, ATHAR_TSA_URL="http://127.0.0.1:9/")
    result = run_manage(env, "check", check=False)
    assert result.returncode != 0
    assert "ATHAR_TSA_CERTIFICATES" in result.stderr
