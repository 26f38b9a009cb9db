"""Two-factor sign-in through the real forms: password, then a TOTP or backup code."""

import io
import re

import pytest
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.management import CommandError, call_command
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from django_otp.plugins.otp_totp.models import TOTPDevice

from accounts import services
from accounts.models import EnrolmentCode, SecondFactorReset
from casefiles.access import ADMIN_GROUP
from casefiles.models import AuditEntry
from tests.conftest import VerifiedClient
from tests.factories import TEST_PASSWORD, UserFactory, totp_code, totp_device

pytestmark = pytest.mark.django_db


@pytest.fixture
def browser():
    """A plain client: no shortcut past the second factor."""
    return Client()


def _password(browser, username, password=TEST_PASSWORD, **extra):
    return browser.post(reverse("login"), {"username": username, "password": password}, **extra)


def _signed_in(browser):
    response = browser.get(reverse("casefiles:case_list"))
    return response.status_code == 200


def test_a_password_alone_signs_nobody_in(browser, cast):
    totp_device(cast.lawyer)
    response = _password(browser, "lawyer")
    assert response.status_code == 302
    assert response["Location"] == reverse("login_verify")
    assert "_auth_user_id" not in browser.session
    assert not _signed_in(browser)
    assert not AuditEntry.objects.filter(action="auth.login").exists()


def test_password_and_totp_code_sign_in_and_the_login_is_audited(browser, cast):
    device = totp_device(cast.lawyer)
    _password(browser, "lawyer", REMOTE_ADDR="203.0.113.9")
    response = browser.post(
        reverse("login_verify"), {"code": totp_code(device)}, REMOTE_ADDR="203.0.113.9"
    )
    assert response.status_code == 302
    assert response["Location"] == reverse("home")  # which sends a member on to their cases
    assert _signed_in(browser)
    login = AuditEntry.objects.get(action="auth.login")
    assert (login.actor, login.ip, login.details) == (
        cast.lawyer,
        "203.0.113.9",
        {"second_factor": "TOTPDevice"},
    )


def test_a_wrong_code_does_not_sign_in_and_is_audited(browser, cast):
    device = totp_device(cast.lawyer)
    _password(browser, "lawyer")
    wrong = f"{(int(totp_code(device)) + 1) % 1_000_000:06d}"
    response = browser.post(reverse("login_verify"), {"code": wrong})
    assert response.status_code == 200
    assert not _signed_in(browser)
    assert AuditEntry.objects.filter(action="auth.second_factor_failed").count() == 1


def test_a_totp_code_cannot_be_used_twice(browser, cast):
    device = totp_device(cast.lawyer)
    code = totp_code(device)
    _password(browser, "lawyer")
    browser.post(reverse("login_verify"), {"code": code})
    assert _signed_in(browser)
    browser.post(reverse("logout"))
    second = Client()
    _password(second, "lawyer")
    response = second.post(reverse("login_verify"), {"code": code})
    assert response.status_code == 200
    assert "wrong or has been used" in response.content.decode()
    assert not _signed_in(second)


def test_too_many_wrong_codes_send_back_to_the_password(browser, cast):
    totp_device(cast.lawyer)
    _password(browser, "lawyer")
    for _ in range(5):
        response = browser.post(reverse("login_verify"), {"code": "000000"})
    assert response.status_code == 302 and response["Location"] == reverse("login")
    assert browser.get(reverse("login_verify")).status_code == 302


def _enrolment_code(user, actor=None):
    return services.issue_enrolment_code(actor=actor, user=user)[0]


def test_first_sign_in_enrols_an_app_shows_a_qr_code_and_backup_codes_that_work_once(browser, cast):
    code = _enrolment_code(cast.observer, cast.admin)
    _password(browser, "observer")
    browser.post(reverse("login_verify"), {"code": code.lower().replace("-", " ")})
    page = browser.get(reverse("login_verify"))
    html = page.content.decode()
    assert "<svg" in html and "<script" not in html and "style=" not in html

    device = TOTPDevice.objects.get(user=cast.observer, confirmed=False)
    response = browser.post(reverse("login_verify"), {"code": totp_code(device)})
    assert response.status_code == 200
    codes = re.findall(r"<li><code>(\w+)</code></li>", response.content.decode())
    assert len(codes) == 10
    assert _signed_in(browser)
    assert AuditEntry.objects.filter(action="auth.2fa_enrol", actor=cast.observer).exists()

    browser.post(reverse("logout"))
    _password(browser, "observer")
    assert browser.post(reverse("login_verify"), {"code": codes[0]}).status_code == 302
    assert _signed_in(browser)
    browser.post(reverse("logout"))
    _password(browser, "observer")
    assert browser.post(reverse("login_verify"), {"code": codes[1]}).status_code == 302
    assert _signed_in(browser)
    browser.post(reverse("logout"))
    _password(browser, "observer")
    assert browser.post(reverse("login_verify"), {"code": codes[0]}).status_code == 200
    assert not _signed_in(browser)


def test_a_session_signed_in_without_a_device_is_ended_at_its_next_request(browser, cast):
    # Any path that calls login() without a verified device (a password reset that logs
    # in, a new view that forgets the second step) is cut off by the session policy.
    totp_device(cast.lawyer)
    browser.force_login(cast.lawyer)  # Django's own login(), no device
    response = browser.get(reverse("casefiles:case_list"))
    assert response.status_code == 302 and response["Location"].startswith(reverse("login"))
    assert "_auth_user_id" not in browser.session
    entry = AuditEntry.objects.filter(action="auth.session_end").get()
    assert entry.details == {"reason": "no_second_factor"}


def test_demo_mode_exempts_only_the_demo_accounts(browser, settings, cast):
    settings.ATHAR_DEMO_MODE = True
    _password(browser, "lawyer")  # a seed_demo username
    assert _signed_in(browser)
    other = UserFactory(username="realperson")
    second = Client()
    _password(second, other.username)
    assert not _signed_in(second)


def test_without_demo_mode_demo_accounts_need_a_second_factor_too(browser, cast):
    response = _password(browser, "lawyer")
    assert response["Location"] == reverse("login_verify")
    assert not _signed_in(browser)


def test_demo_mode_is_refused_in_production(tmp_path):
    from tests.casefiles.test_settings import _production_env
    from tests.scratch_db import run_manage

    result = run_manage(_production_env(tmp_path, ATHAR_DEMO_MODE="1"), "check", check=False)
    assert result.returncode != 0
    assert "ATHAR_DEMO_MODE" in result.stderr


def test_an_admin_reset_makes_the_user_enrol_again_with_the_code_shown_to_the_admin(browser, cast):
    """The only admin resets an account with access to no case at once (it reaches
    nothing; any later grant of it waits, the admin holding it)."""
    device = totp_device(cast.outsider)
    admin = VerifiedClient()
    admin.force_login(cast.admin)
    url = reverse("manage_user_action", args=[cast.outsider.pk, "reset-2fa"])
    page = admin.post(url, {"reason": "phone lost at the border"})  # the only admin: at once
    assert page.status_code == 200 and "no-store" in page["Cache-Control"]
    assert AuditEntry.objects.get(action="auth.2fa_reset").details["sole_admin"] is True
    code = re.search(r"<code dir=\"ltr\">([A-Z0-9-]+)</code>", page.content.decode())[1]
    assert not EnrolmentCode.objects.filter(digest__contains=code.replace("-", "")).exists()

    _password(browser, "outsider")
    response = browser.post(reverse("login_verify"), {"code": totp_code(device)})
    assert "<svg" not in response.content.decode()  # the old app opens nothing...
    assert not _signed_in(browser)
    browser.post(reverse("login_verify"), {"code": code})
    enrol = browser.get(reverse("login_verify")).content.decode()
    assert "<svg" in enrol  # ...the code from the admin opens the enrolment
    new = TOTPDevice.objects.get(user=cast.outsider, confirmed=False)
    assert browser.post(reverse("login_verify"), {"code": totp_code(new)}).status_code == 200
    assert _signed_in(browser)
    assert EnrolmentCode.objects.get(user=cast.outsider).used_at is not None


def test_the_only_admin_cannot_reset_a_case_members_second_factor_alone(cast):
    """A reset hands the admin the member's enrolment code, that is their account and
    their case: with no second admin it waits, and the page says what to do."""
    device = totp_device(cast.lawyer)
    admin = VerifiedClient()
    admin.force_login(cast.admin)
    url = reverse("manage_user_action", args=[cast.lawyer.pk, "reset-2fa"])
    page = admin.post(url, {"reason": "phone lost at the border"}, follow=True)
    text = page.content.decode()
    assert "<code" not in text  # no enrolment code shown
    assert "no other admin" in text and "second admin is added" in text
    assert TOTPDevice.objects.filter(pk=device.pk).exists()
    assert SecondFactorReset.objects.get(user=cast.lawyer).outcome == "pending"
    assert not AuditEntry.objects.filter(action="auth.2fa_reset").exists()
    assert not EnrolmentCode.objects.filter(user=cast.lawyer).exists()


def test_a_password_alone_cannot_set_up_a_second_factor(browser, cast):
    _password(browser, "observer")
    page = browser.get(reverse("login_verify"))
    assert "enrolment code" in page.content.decode() and "<svg" not in page.content.decode()
    assert not TOTPDevice.objects.filter(user=cast.observer).exists()  # no key made or shown
    for _ in range(5):
        response = browser.post(reverse("login_verify"), {"code": "ABCD-EFGH-JKMN-PQRS"})
        assert not TOTPDevice.objects.filter(user=cast.observer).exists()
    assert response.status_code == 302 and response["Location"] == reverse("login")
    failed = AuditEntry.objects.filter(
        action="auth.enrolment_code_failed", target_id=str(cast.observer.pk)
    )
    assert failed.count() == 5
    assert not _signed_in(browser)


def test_an_enrolment_code_works_once_and_not_after_it_expires(browser, cast, settings):
    code = _enrolment_code(cast.observer)
    _password(browser, "observer")
    browser.post(reverse("login_verify"), {"code": code})
    browser.get(reverse("login_verify"))  # the enrolment page, with its new key
    device = TOTPDevice.objects.get(user=cast.observer, confirmed=False)
    browser.post(reverse("login_verify"), {"code": totp_code(device)})
    assert _signed_in(browser)
    services.reset_second_factor(actor=cast.admin, user=cast.observer)  # a new code, unused
    again = Client()
    _password(again, "observer")
    response = again.post(reverse("login_verify"), {"code": code})
    assert response.status_code == 400 and "wrong, used or expired" in response.content.decode()

    fresh = _enrolment_code(cast.observer)
    EnrolmentCode.objects.filter(used_at__isnull=True).update(expires_at=timezone.now())
    assert again.post(reverse("login_verify"), {"code": fresh}).status_code == 400


def test_an_enrolment_code_spent_elsewhere_meanwhile_confirms_no_device(browser, cast):
    code = _enrolment_code(cast.observer)
    _password(browser, "observer")
    browser.post(reverse("login_verify"), {"code": code})
    browser.get(reverse("login_verify"))  # the enrolment page, with its new key
    device = TOTPDevice.objects.get(user=cast.observer, confirmed=False)
    _enrolment_code(cast.observer)  # an admin issued a new one: the first stops working
    response = browser.post(reverse("login_verify"), {"code": totp_code(device)})
    assert response.status_code == 302 and response["Location"] == reverse("login_verify")
    assert not TOTPDevice.objects.filter(user=cast.observer, confirmed=True).exists()
    assert not _signed_in(browser)


def test_the_first_admin_gets_an_enrolment_code_from_the_command_line(browser, cast):
    out, err = io.StringIO(), io.StringIO()
    call_command("enrolment_code", "observer", stdout=out, stderr=err)
    code = out.getvalue().strip()
    assert re.fullmatch(r"([A-HJKMNP-Z2-9]{4}-){3}[A-HJKMNP-Z2-9]{4}", code)
    assert "Works once" in err.getvalue()
    entry = AuditEntry.objects.get(action="auth.enrolment_code_issue")
    assert entry.actor is None and code not in str(entry.details)
    _password(browser, "observer")
    browser.post(reverse("login_verify"), {"code": code})
    assert "<svg" in browser.get(reverse("login_verify")).content.decode()
    totp_device(cast.lawyer)
    with pytest.raises(CommandError, match="has a second factor"):
        call_command("enrolment_code", "lawyer")


def test_an_enrolment_key_seen_by_someone_else_never_becomes_the_users_key(browser, cast):
    # Someone who knows the password and saw the enrolment code notes the key...
    code = _enrolment_code(cast.observer)
    _password(browser, "observer")
    browser.post(reverse("login_verify"), {"code": code})
    browser.get(reverse("login_verify"))

    seen = TOTPDevice.objects.get(user=cast.observer, confirmed=False)
    # ...then the user signs in and enrols with a key of their own.
    user = Client()
    _password(user, "observer")
    user.post(reverse("login_verify"), {"code": code})
    user.get(reverse("login_verify"))
    own = TOTPDevice.objects.get(user=cast.observer, confirmed=False)
    assert own.key != seen.key
    assert user.post(reverse("login_verify"), {"code": totp_code(own)}).status_code == 200
    assert _signed_in(user)
    # The key the other person saw opens nothing.
    third = Client()
    _password(third, "observer")
    assert third.post(reverse("login_verify"), {"code": totp_code(seen)}).status_code == 200
    assert not _signed_in(third)


def test_an_admin_issues_an_enrolment_code_to_a_user_without_a_second_factor(cast):
    admin = VerifiedClient()
    admin.force_login(cast.admin)
    page = admin.get(reverse("manage_user", args=[cast.outsider.pk])).content.decode()
    assert "Issue an enrolment code" in page and "reset the second factor" not in page
    issued = admin.post(reverse("manage_user_action", args=[cast.outsider.pk, "enrolment-code"]))
    assert re.search(r"<code dir=\"ltr\">[A-Z0-9-]{19}</code>", issued.content.decode())
    assert EnrolmentCode.objects.get(user=cast.outsider).issued_by == cast.admin

    # An account with case access and no device yet: its code takes a second admin too,
    # or one admin could hand themselves a code, set a password and act as that person.
    UserFactory(username="admin2", groups=[ADMIN_GROUP], is_staff=True)
    page = admin.get(reverse("manage_user", args=[cast.observer.pk])).content.decode()
    assert "Issue an enrolment code" not in page and "Ask to reset the second factor" in page
    admin.post(reverse("manage_user_action", args=[cast.observer.pk, "enrolment-code"]))
    assert not EnrolmentCode.objects.filter(user=cast.observer).exists()
    admin.post(
        reverse("manage_user_action", args=[cast.observer.pk, "reset-2fa"]),
        {"reason": "new colleague, first sign-in"},
    )
    assert SecondFactorReset.objects.get(user=cast.observer).outcome == "pending"
    assert not EnrolmentCode.objects.filter(user=cast.observer).exists()

    totp_device(cast.lawyer)
    refused = admin.post(reverse("manage_user_action", args=[cast.lawyer.pk, "enrolment-code"]))
    assert refused.status_code == 302
    assert not EnrolmentCode.objects.filter(user=cast.lawyer).exists()


def test_with_another_admin_a_reset_waits_for_their_decision(browser, cast):
    """One admin alone cannot reset a user's second factor (and, with a password set in
    the admin, sign in as them): another admin approves, and gets the code to hand over."""
    second = UserFactory(username="admin2", groups=[ADMIN_GROUP], is_staff=True)
    device = totp_device(cast.lawyer)
    asker, decider = VerifiedClient(), VerifiedClient()
    asker.force_login(cast.admin)
    decider.force_login(second)
    action = lambda what: reverse("manage_user_action", args=[cast.lawyer.pk, what])  # noqa: E731

    response = asker.post(action("reset-2fa"), {"reason": "phone lost at the border"})
    assert response.status_code == 302
    reset = SecondFactorReset.objects.get()
    assert (reset.outcome, reset.requested_by) == ("pending", cast.admin)
    assert TOTPDevice.objects.filter(pk=device.pk).exists()  # nothing done yet
    # Whoever asked cannot approve it, and cannot ask twice.
    asker.post(action("reset-2fa-approve"), {"request": reset.pk})
    assert TOTPDevice.objects.filter(pk=device.pk).exists()
    asker.post(action("reset-2fa"), {"reason": "asking again"})
    assert SecondFactorReset.objects.count() == 1
    page = decider.get(reverse("manage_user", args=[cast.lawyer.pk])).content.decode()
    assert "phone lost at the border" in page and "Approve the reset" in page
    for odd in ("", "x", "²"):
        assert decider.post(action("reset-2fa-approve"), {"request": odd}).status_code == 404

    page = decider.post(action("reset-2fa-approve"), {"request": reset.pk})
    assert page.status_code == 200
    code = re.search(r"<code dir=\"ltr\">([A-Z0-9-]+)</code>", page.content.decode())[1]
    assert not TOTPDevice.objects.filter(pk=device.pk).exists()
    reset.refresh_from_db()
    assert (reset.outcome, reset.decided_by) == ("approved", second)
    entry = AuditEntry.objects.get(action="auth.2fa_reset")
    assert (entry.actor, entry.details["asked_by"], entry.details["sole_admin"]) == (
        second,
        "admin",
        False,
    )
    _password(browser, "lawyer")
    browser.post(reverse("login_verify"), {"code": code})
    assert "<svg" in browser.get(reverse("login_verify")).content.decode()  # enrols again


def test_a_reset_can_be_refused_or_withdrawn_and_then_nothing_changes(cast):
    second = UserFactory(username="admin2", groups=[ADMIN_GROUP], is_staff=True)
    device = totp_device(cast.lawyer)
    asked, done = services.ask_second_factor_reset(
        actor=cast.admin, user=cast.lawyer, reason="phone lost"
    )
    assert done is None
    with pytest.raises(PermissionDenied):  # only an admin decides
        services.decide_second_factor_reset(actor=cast.lawyer, request=asked, approve=False)
    services.decide_second_factor_reset(actor=second, request=asked, approve=False)
    again, _ = services.ask_second_factor_reset(
        actor=cast.admin, user=cast.lawyer, reason="lost it"
    )
    services.decide_second_factor_reset(actor=cast.admin, request=again, approve=False)
    assert list(SecondFactorReset.objects.values_list("outcome", flat=True)) == [
        "cancelled",
        "refused",
    ]
    assert TOTPDevice.objects.filter(pk=device.pk).exists()
    assert not EnrolmentCode.objects.filter(user=cast.lawyer).exists()
    with pytest.raises(ValidationError, match="decided already"):
        services.decide_second_factor_reset(actor=second, request=asked, approve=True)
