"""Security keys (WebAuthn) as a second factor, with a software authenticator."""

import json
import re

import pytest
from django.test import Client
from django.urls import reverse
from django_otp_webauthn.models import WebAuthnCredential

from casefiles.models import AuditEntry
from tests.conftest import VerifiedClient
from tests.factories import TEST_PASSWORD
from tests.webauthn_authenticator import SoftAuthenticator

pytestmark = pytest.mark.django_db

HOST = {"HTTP_HOST": "localhost", "HTTP_ORIGIN": "http://localhost:8000"}


def _post_json(client, name, data=None):
    return client.post(
        reverse(f"otp_webauthn:{name}"),
        json.dumps(data or {}),
        content_type="application/json",
        **HOST,
    )


def _register(user):
    client = VerifiedClient()
    client.force_login(user)
    key = SoftAuthenticator()
    options = _post_json(client, "credential-registration-begin").json()
    response = _post_json(client, "credential-registration-complete", key.register(options))
    assert response.status_code == 200, response.content
    return key


def _password(client, username):
    return client.post(reverse("login"), {"username": username, "password": TEST_PASSWORD}, **HOST)


def _signed_in(client):
    return client.get(reverse("casefiles:case_list"), **HOST).status_code == 200


def test_a_signed_in_user_adds_a_security_key_and_it_is_audited(cast):
    _register(cast.lawyer)
    assert WebAuthnCredential.objects.filter(user=cast.lawyer, confirmed=True).count() == 1
    entry = AuditEntry.objects.get(action="auth.2fa_enrol")
    assert (entry.actor, entry.details) == (cast.lawyer, {"device": "webauthn"})


def test_password_and_security_key_sign_in(cast):
    key = _register(cast.lawyer)
    browser = Client()
    _password(browser, "lawyer")
    page = browser.get(reverse("login_verify"), **HOST).content.decode()
    assert 'id="passkey-verification-button"' in page
    # Under the CSP nothing inline runs: scripts come from this server, the config is data.
    for tag in re.findall(r"<script[^>]*>", page):
        assert 'type="application/json"' in tag or re.search(r'src="/', tag), tag
    options = _post_json(browser, "credential-authentication-begin").json()
    assert [c["id"] for c in options["allowCredentials"]]  # only this user's keys
    response = _post_json(browser, "credential-authentication-complete", key.assert_(options))
    assert response.status_code == 200, response.content
    assert response.json()["redirect_url"] == reverse("home")
    assert _signed_in(browser)
    login = AuditEntry.objects.filter(action="auth.login").order_by("seq").last()
    assert login.details == {"second_factor": "WebAuthnCredential"}


def test_a_security_key_alone_signs_nobody_in(cast):
    key = _register(cast.lawyer)
    browser = Client()
    response = _post_json(browser, "credential-authentication-begin")
    assert response.status_code >= 400
    assert not _signed_in(browser)
    assert key.sign_count == 1  # registered, never asked to sign


def test_a_replayed_assertion_fails(cast):
    key = _register(cast.lawyer)
    browser = Client()
    _password(browser, "lawyer")
    options = _post_json(browser, "credential-authentication-begin").json()
    assertion = key.assert_(options)
    assert _post_json(browser, "credential-authentication-complete", assertion).status_code == 200
    browser.post(reverse("logout"), **HOST)
    again = Client()
    _password(again, "lawyer")
    _post_json(again, "credential-authentication-begin")
    response = _post_json(again, "credential-authentication-complete", assertion)
    assert response.status_code >= 400
    assert not _signed_in(again)


def test_another_users_key_does_not_second_this_users_password(cast):
    _register(cast.lawyer)
    mallory_key = _register(cast.outsider)
    browser = Client()
    _password(browser, "lawyer")
    options = _post_json(browser, "credential-authentication-begin").json()
    response = _post_json(
        browser, "credential-authentication-complete", mallory_key.assert_(options)
    )
    assert response.status_code >= 400
    assert not _signed_in(browser)


def test_revealing_identities_can_require_a_session_signed_in_with_a_key(settings, cast):
    from django_otp_webauthn.models import WebAuthnCredential

    from casefiles.access import Action, can

    assert can(cast.investigator, Action.REVEAL_IDENTITY, cast.case)
    settings.ATHAR_REVEAL_NEEDS_SECURITY_KEY = True
    assert not can(cast.investigator, Action.REVEAL_IDENTITY, cast.case)
    _register(cast.investigator)
    cast.investigator.otp_device = WebAuthnCredential.objects.get(user=cast.investigator)
    assert can(cast.investigator, Action.REVEAL_IDENTITY, cast.case)
    assert can(cast.investigator, Action.VIEW_CASE, cast.case)  # other actions unchanged
    assert not can(cast.lawyer, Action.REVEAL_IDENTITY, cast.case)  # nor the role matrix


def test_a_session_seconded_by_a_key_reveals_and_one_seconded_by_a_code_does_not(settings, cast):
    from django.test import RequestFactory
    from django_otp.middleware import OTPMiddleware

    from casefiles.access import Action, can

    settings.ATHAR_REVEAL_NEEDS_SECURITY_KEY = True
    key = _register(cast.investigator)
    browser = Client()
    _password(browser, "investigator")
    options = _post_json(browser, "credential-authentication-begin").json()
    _post_json(browser, "credential-authentication-complete", key.assert_(options))
    code_session = VerifiedClient()
    code_session.force_login(cast.investigator)  # TOTP

    def request_user(client):
        from django.contrib.auth.middleware import AuthenticationMiddleware
        from django.contrib.sessions.backends.db import SessionStore

        request = RequestFactory().get("/")
        request.session = SessionStore(client.cookies["sessionid"].value)
        AuthenticationMiddleware(lambda r: None)(request)
        OTPMiddleware(lambda r: None)(request)
        return request.user

    assert can(request_user(browser), Action.REVEAL_IDENTITY, cast.case)
    assert not can(request_user(code_session), Action.REVEAL_IDENTITY, cast.case)
