"""Settings read from the environment: a value the helper does not understand stops the
start-up with a message naming the variable, and every variable is in the README."""

import os
import re
import subprocess
import sys

import pytest
from django.core.exceptions import ImproperlyConfigured

from athar import env
from tests.scratch_db import ROOT


def _settings_with(tmp_path, **variables):
    """Load the settings in a fresh process with ``variables`` set; print two of them."""
    environment = {
        k: v for k, v in os.environ.items() if not k.startswith("ATHAR_") and k != "DATABASE_URL"
    }
    environment.update(ATHAR_DATA_DIR=str(tmp_path), DJANGO_SETTINGS_MODULE="athar.settings")
    environment.update(variables)
    load = (
        "from django.conf import settings; "
        "print(settings.ATHAR_REVEAL_NEEDS_SECURITY_KEY, settings.AXES_FAILURE_LIMIT)"
    )
    return subprocess.run(
        [sys.executable, "-c", load], env=environment, cwd=ROOT, capture_output=True, text=True
    )


@pytest.mark.parametrize("value", ["true", "TRUE", "1", "yes", "On"])
def test_a_security_switch_set_to_true_is_on(tmp_path, value):
    started = _settings_with(tmp_path, ATHAR_REVEAL_NEEDS_SECURITY_KEY=value)
    assert started.stdout.split() == ["True", "5"], started.stderr


@pytest.mark.parametrize("value", ["false", "0", "No", "off", ""])
def test_a_security_switch_set_to_false_or_left_empty_is_off(tmp_path, value):
    started = _settings_with(tmp_path, ATHAR_REVEAL_NEEDS_SECURITY_KEY=value)
    assert started.stdout.split() == ["False", "5"], started.stderr


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("ATHAR_REVEAL_NEEDS_SECURITY_KEY", "maybe"),
        ("ATHAR_DEMO_MODE", "enabled"),
        ("ATHAR_LOCKOUT_FAILURES", "five"),
        ("ATHAR_LOCKOUT_FAILURES", "0"),
        ("ATHAR_SESSION_IDLE_MINUTES", "1.5"),
        ("ATHAR_ENV", "staging"),
    ],
)
def test_a_value_not_understood_stops_the_start_up_naming_the_variable(tmp_path, variable, value):
    started = _settings_with(tmp_path, **{variable: value})
    assert started.returncode != 0
    assert "ImproperlyConfigured" in started.stderr
    assert f"{variable}={value!r}" in started.stderr


def test_the_helpers_read_what_they_promise(monkeypatch):
    monkeypatch.setenv("ATHAR_X", " Yes ")
    assert env.boolean("ATHAR_X") is True
    monkeypatch.setenv("ATHAR_X", " 42 ")
    assert env.integer("ATHAR_X", 7) == 42
    monkeypatch.setenv("ATHAR_X", " a, ,b ,")
    assert env.items("ATHAR_X") == ["a", "b"]
    monkeypatch.delenv("ATHAR_X")
    assert env.boolean("ATHAR_X", default=True) is True
    assert env.integer("ATHAR_X", 7) == 7
    assert env.items("ATHAR_X", "c,d") == ["c", "d"]
    monkeypatch.setenv("ATHAR_X", "-3")
    with pytest.raises(ImproperlyConfigured, match="ATHAR_X='-3' must be at least 0"):
        env.integer("ATHAR_X", 7, minimum=0)


def test_every_variable_the_product_reads_is_in_the_readme_table():
    readme = (ROOT / "README.md").read_text()
    table = {
        name
        for line in readme.splitlines()
        if line.startswith("| `")
        for name in re.findall(r"`((?:ATHAR_|DATABASE_URL)[A-Z_]*)`", line.split(" | ")[0])
    }
    read = set()
    for package in ("athar", "casefiles", "accounts", "evidence", "people", "demo"):
        for path in (ROOT / package).rglob("*.py"):
            source = path.read_text()
            read |= set(re.findall(r"""env\.\w+\(\s*["']([A-Z_]+)["']""", source))
            read |= set(re.findall(r"""environ(?:\.get\(|\[)\s*["']([A-Z_]+)["']""", source))
    read -= {"DJANGO_SETTINGS_MODULE"}
    assert "ATHAR_REVEAL_NEEDS_SECURITY_KEY" in read
    assert read <= table, f"add to the README's settings table: {sorted(read - table)}"


def _origins_with(tmp_path, **variables):
    environment = {
        k: v for k, v in os.environ.items() if not k.startswith("ATHAR_") and k != "DATABASE_URL"
    }
    environment.update(ATHAR_DATA_DIR=str(tmp_path), DJANGO_SETTINGS_MODULE="athar.settings")
    environment.update(variables)
    load = (
        "from django.conf import settings; "
        "print(settings.OTP_WEBAUTHN_RP_ID, *settings.OTP_WEBAUTHN_ALLOWED_ORIGINS)"
    )
    return subprocess.run(
        [sys.executable, "-c", load], env=environment, cwd=ROOT, capture_output=True, text=True
    )


def test_security_keys_are_accepted_from_the_port_the_app_serves_on(tmp_path):
    started = _origins_with(tmp_path, ATHAR_PORT="8101")
    assert started.stdout.split() == ["localhost", "http://localhost:8101"], started.stderr
    started = _origins_with(tmp_path)
    assert started.stdout.split() == ["localhost", "http://localhost:8000"], started.stderr
    # Origins set by hand win over the port.
    started = _origins_with(tmp_path, ATHAR_PORT="8101", ATHAR_WEBAUTHN_ORIGINS="http://a:1")
    assert started.stdout.split() == ["localhost", "http://a:1"], started.stderr


@pytest.mark.parametrize("value", ["0", "65536", "eighty"])
def test_a_port_that_is_not_one_stops_the_start_up(tmp_path, value):
    started = _origins_with(tmp_path, ATHAR_PORT=value)
    assert started.returncode != 0
    assert f"ATHAR_PORT={value!r}" in started.stderr
