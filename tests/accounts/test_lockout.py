"""Lockout on (username, address), honest client addresses, and a sign-in page that
neither looks nor times differently for accounts that do not exist."""

import re

import pytest
from django.contrib.auth.hashers import Argon2PasswordHasher
from django.test import Client, RequestFactory
from django.urls import reverse

from casefiles.models import AuditEntry
from casefiles.netaddr import client_ip
from tests.factories import TEST_PASSWORD, totp_device

pytestmark = pytest.mark.django_db

REAL_USER_IP = "198.51.100.7"


def _try(client, username, password, ip):
    return client.post(
        reverse("login"), {"username": username, "password": password}, REMOTE_ADDR=ip
    )


def test_a_username_flood_from_other_addresses_does_not_lock_the_real_user_out(settings, cast):
    totp_device(cast.lawyer)
    attacker = Client()
    for n in range(3 * settings.AXES_FAILURE_LIMIT):
        _try(attacker, "lawyer", f"guess-{n}", f"203.0.113.{n % 3 + 1}")
    assert _try(attacker, "lawyer", "guess", "203.0.113.1").status_code == 429
    response = _try(Client(), "lawyer", TEST_PASSWORD, REAL_USER_IP)
    assert response.status_code == 302
    assert response["Location"] == reverse("login_verify")


def test_repeated_failures_lock_the_pair_even_with_the_right_password(settings, cast):
    attacker = Client()
    statuses = [
        _try(attacker, "lawyer", f"guess-{n}", "203.0.113.5").status_code
        for n in range(settings.AXES_FAILURE_LIMIT)
    ]
    assert statuses == [200] * (settings.AXES_FAILURE_LIMIT - 1) + [429]
    response = _try(attacker, "lawyer", TEST_PASSWORD, "203.0.113.5")
    assert response.status_code == 429
    assert "Too many failed attempts" in response.content.decode()
    assert "login_verify" not in response.get("Location", "")
    # Every attempt is in the audit log, with the address.
    failed = AuditEntry.objects.filter(action="auth.login_failed")
    assert failed.count() == settings.AXES_FAILURE_LIMIT + 1
    assert set(failed.values_list("ip", flat=True)) == {"203.0.113.5"}


def test_the_lockout_ends_after_the_cool_off(settings, cast):
    from axes.models import AccessAttempt
    from django.utils import timezone

    attacker = Client()
    for n in range(settings.AXES_FAILURE_LIMIT):
        _try(attacker, "lawyer", f"guess-{n}", "203.0.113.5")
    assert _try(attacker, "lawyer", TEST_PASSWORD, "203.0.113.5").status_code == 429
    AccessAttempt.objects.update(attempt_time=timezone.now() - settings.AXES_COOLOFF_TIME)
    assert _try(attacker, "lawyer", TEST_PASSWORD, "203.0.113.5").status_code == 302


def _page(response, username):
    html = response.content.decode().replace(f'value="{username}"', 'value="NAME"')
    return re.sub(r'name="csrfmiddlewaretoken" value="\w+"', "CSRF", html)


def test_a_wrong_password_and_an_unknown_user_get_the_same_page(cast):
    known = _try(Client(), "lawyer", "wrong password", REAL_USER_IP)
    unknown = _try(Client(), "nobody-here", "wrong password", REAL_USER_IP)
    assert known.status_code == unknown.status_code == 200
    assert _page(known, "lawyer") == _page(unknown, "nobody-here")


def test_a_locked_out_known_and_unknown_user_get_the_same_page(settings, cast):
    pages = []
    for username in ("lawyer", "nobody-here"):
        client = Client()
        for n in range(settings.AXES_FAILURE_LIMIT):
            _try(client, username, f"guess-{n}", "203.0.113.8")
        response = _try(client, username, "guess", "203.0.113.8")
        assert response.status_code == 429
        pages.append(_page(response, username))
    assert pages[0] == pages[1]


def test_an_unknown_user_costs_one_password_hash_like_a_known_one(monkeypatch, cast):
    # Timing: Django's ModelBackend hashes the password for a missing user too; the
    # lockout backend in front of it must not short-cut that. Count Argon2 runs.
    runs = []
    for name in ("encode", "verify"):
        original = getattr(Argon2PasswordHasher, name)

        def counted(self, *args, _original=original, _name=name, **kwargs):
            runs.append(_name)
            return _original(self, *args, **kwargs)

        monkeypatch.setattr(Argon2PasswordHasher, name, counted)
    _try(Client(), "lawyer", "wrong password", REAL_USER_IP)
    known = list(runs)
    runs.clear()
    _try(Client(), "nobody-here", "wrong password", REAL_USER_IP)
    assert known == ["verify"]
    assert runs == ["encode"]


def _request(remote, forwarded=None):
    meta = {"REMOTE_ADDR": remote}
    if forwarded is not None:
        meta["HTTP_X_FORWARDED_FOR"] = forwarded
    return RequestFactory().get("/", **meta)


def test_without_a_trusted_proxy_forwarded_for_is_ignored(settings):
    settings.ATHAR_TRUSTED_PROXIES = []
    assert client_ip(_request("203.0.113.9", "10.9.9.9")) == "203.0.113.9"


def test_behind_the_trusted_proxy_the_address_it_saw_is_the_client(settings):
    settings.ATHAR_TRUSTED_PROXIES = ["10.0.0.2"]
    # The client wrote "1.2.3.4" itself; the proxy appended the address it saw.
    assert client_ip(_request("10.0.0.2", "1.2.3.4, 198.51.100.7")) == "198.51.100.7"
    # A request that bypasses the proxy cannot choose its address.
    assert client_ip(_request("203.0.113.9", "198.51.100.7")) == "203.0.113.9"
    assert client_ip(_request("10.0.0.2", "garbage")) == "10.0.0.2"


def test_the_audit_log_and_the_lockout_see_the_same_address_behind_the_proxy(settings, cast):
    settings.ATHAR_TRUSTED_PROXIES = ["10.0.0.0/24"]
    client = Client()
    for n in range(settings.AXES_FAILURE_LIMIT):
        client.post(
            reverse("login"),
            {"username": "lawyer", "password": f"guess-{n}"},
            REMOTE_ADDR="10.0.0.2",
            HTTP_X_FORWARDED_FOR=f"192.0.2.{n}, 203.0.113.5",  # spoofed left part varies
        )
    assert set(
        AuditEntry.objects.filter(action="auth.login_failed").values_list("ip", flat=True)
    ) == {"203.0.113.5"}
    from axes.models import AccessAttempt

    assert set(AccessAttempt.objects.values_list("ip_address", flat=True)) == {"203.0.113.5"}
    # The real user behind the same proxy, from another address, still gets in.
    totp_device(cast.lawyer)
    response = Client().post(
        reverse("login"),
        {"username": "lawyer", "password": TEST_PASSWORD},
        REMOTE_ADDR="10.0.0.2",
        HTTP_X_FORWARDED_FOR=REAL_USER_IP,
    )
    assert response.status_code == 302
