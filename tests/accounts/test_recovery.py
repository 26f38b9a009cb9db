"""A forgotten password: one admin asks, another approves and hands over a recovery code,
and the user chooses a new password and a new authenticator, through the real pages."""

import re

import pytest
from axes.models import AccessAttempt
from django.core.exceptions import ValidationError
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from django_otp.plugins.otp_totp.models import TOTPDevice

from accounts import services
from accounts.models import EnrolmentCode, SecondFactorReset, UserSession
from casefiles.access import ADMIN_GROUP
from casefiles.models import AuditEntry
from tests.conftest import VerifiedClient
from tests.factories import TEST_PASSWORD, UserFactory, totp_code, totp_device

pytestmark = pytest.mark.django_db

NEW_PASSWORD = "olive grove at dawn 1987"
ATTACKER = "203.0.113.5"
RECOVERY_NOTE = "athar_recovery"
CODE = re.compile(r"<code dir=\"ltr\">([A-Z0-9-]+)</code>")


def _admin_client(user):
    client = VerifiedClient()
    client.force_login(user)
    return client


def _action(user, what):
    return reverse("manage_user_action", args=[user.pk, what])


def _signed_in(browser):
    return browser.get(reverse("casefiles:case_list")).status_code == 200


def _password(browser, username, password):
    return browser.post(reverse("login"), {"username": username, "password": password})


def _recover(browser, username, code, **extra):
    return browser.post(reverse("recover"), {"username": username, "code": code}, **extra)


def _new_password(browser, password=NEW_PASSWORD):
    return browser.post(
        reverse("recover_password"), {"new_password1": password, "new_password2": password}
    )


@pytest.fixture
def second_admin(db):
    return UserFactory(username="admin2", groups=[ADMIN_GROUP], is_staff=True)


def _recovery_code(cast, second_admin, user=None):
    """Admin A asks, admin B approves: the code shown to B."""
    user = user or cast.lawyer
    services.ask_second_factor_reset(
        actor=cast.admin, user=user, reason="forgot the password", password=True
    )
    done = services.decide_second_factor_reset(
        actor=second_admin,
        request=SecondFactorReset.objects.get(user=user, outcome="pending"),
        approve=True,
    )
    return done[0]


def _finish_recovery(browser, username, code):
    _recover(browser, username, code)
    _new_password(browser)
    browser.get(reverse("login_verify"))  # the enrolment page, with its new key
    device = TOTPDevice.objects.get(user__username=username, confirmed=False)
    return browser.post(reverse("login_verify"), {"code": totp_code(device)}), device


def test_a_forgotten_password_is_recovered_with_two_admins_and_the_user_alone(cast, second_admin):
    old_device = totp_device(cast.lawyer)
    member = VerifiedClient()
    member.force_login(cast.lawyer)
    asker, approver = _admin_client(cast.admin), _admin_client(second_admin)

    # Admin A asks, ticking "the password too".
    page = asker.get(reverse("manage_user", args=[cast.lawyer.pk])).content.decode()
    assert "The password too (forgotten password)" in page
    asked = asker.post(
        _action(cast.lawyer, "reset-2fa"),
        {"reason": "forgot the password after leave", "password": "1"},
        follow=True,
    )
    assert asked.status_code == 200 and not CODE.search(asked.content.decode())
    reset = SecondFactorReset.objects.get()
    assert (reset.password, reset.outcome) == (True, "pending")
    assert TOTPDevice.objects.filter(pk=old_device.pk).exists()  # nothing done yet

    # Admin B sees what is asked, approves, and alone gets the code.
    page = approver.get(reverse("manage_user", args=[cast.lawyer.pk])).content.decode()
    assert "password and second factor" in page and "Approve the recovery" in page
    page = approver.post(_action(cast.lawyer, "reset-2fa-approve"), {"request": reset.pk})
    html = page.content.decode()
    assert "Recovery code for lawyer" in html and "no-store" in page["Cache-Control"]
    code = CODE.search(html)[1]
    assert not cast.lawyer.__class__.objects.get(pk=cast.lawyer.pk).has_usable_password()
    assert not TOTPDevice.objects.filter(pk=old_device.pk).exists()
    assert not _signed_in(member)  # the member's sessions ended
    assert not UserSession.objects.filter(user=cast.lawyer, ended_at__isnull=True).exists()

    # The old password opens nothing.
    browser = Client()
    response = _password(browser, "lawyer", TEST_PASSWORD)
    assert response.status_code == 200 and "login_verify" not in response.get("Location", "")

    # The user: username and code, then a new password (Django's validators)...
    login_page = browser.get(reverse("login")).content.decode()
    assert "I have a recovery code from an admin" in login_page
    response = _recover(browser, "lawyer", code.lower().replace("-", " "))
    assert response.status_code == 302 and response["Location"] == reverse("recover_password")
    assert not _signed_in(browser)
    assert browser.get(reverse("login_verify"))["Location"] == reverse("login")  # in that order
    weak = _new_password(browser, "12345678")
    assert weak.status_code == 400 and "too common" in weak.content.decode()
    mismatch = browser.post(
        reverse("recover_password"), {"new_password1": NEW_PASSWORD, "new_password2": "other"}
    )
    assert mismatch.status_code == 400
    response = _new_password(browser)
    assert response.status_code == 302 and response["Location"] == reverse("login_verify")
    assert not _signed_in(browser)
    assert _password(Client(), "lawyer", NEW_PASSWORD).status_code == 200  # not yet in force

    # ...then a new authenticator, and only then is the user in.
    enrol = browser.get(reverse("login_verify")).content.decode()
    assert "<svg" in enrol
    device = TOTPDevice.objects.get(user=cast.lawyer, confirmed=False)
    response = browser.post(reverse("login_verify"), {"code": totp_code(device)})
    assert response.status_code == 200
    backup_codes = re.findall(r"<li><code>(\w+)</code></li>", response.content.decode())
    assert _signed_in(browser)
    assert EnrolmentCode.objects.get(user=cast.lawyer).used_at is not None

    # Next time: the new password and the new device; never the old password.
    browser.post(reverse("logout"))
    assert _password(Client(), "lawyer", TEST_PASSWORD).status_code == 200
    later = Client()
    assert _password(later, "lawyer", NEW_PASSWORD)["Location"] == reverse("login_verify")
    later.post(reverse("login_verify"), {"code": backup_codes[0]})
    assert _signed_in(later)

    # Every step is in the audit log, by whom it was done, and the code in none of it.
    actions = list(
        AuditEntry.objects.filter(action__contains="recover").values_list("action", "actor")
    )
    assert actions == [
        ("auth.password_recover_ask", cast.admin.pk),
        ("auth.password_recover_approve", second_admin.pk),
        ("auth.recovery_code_issue", second_admin.pk),
        ("auth.password_recover_start", None),
        ("auth.password_recover_choose", None),
        ("auth.password_recover_use", cast.lawyer.pk),
    ]
    approve = AuditEntry.objects.get(action="auth.password_recover_approve")
    assert (approve.details["asked_by"], approve.details["sole_admin"]) == ("admin", False)
    compact = code.replace("-", "")
    assert not any(
        compact in str(d).replace("-", "") for d in AuditEntry.objects.values_list("details")
    )
    assert NEW_PASSWORD not in str(list(AuditEntry.objects.values_list("details")))


def test_the_recovery_code_is_shown_to_the_approver_never_to_the_asker(cast, second_admin):
    asker, approver = _admin_client(cast.admin), _admin_client(second_admin)
    seen_by_asker = [
        asker.post(
            _action(cast.lawyer, "reset-2fa"),
            {"reason": "forgot the password", "password": "1"},
            follow=True,
        )
    ]
    assert not CODE.search(seen_by_asker[0].content.decode())
    reset = SecondFactorReset.objects.get()
    # The asker cannot approve their own ask, by the page or the service.
    seen_by_asker.append(
        asker.post(_action(cast.lawyer, "reset-2fa-approve"), {"request": reset.pk}, follow=True)
    )
    assert not CODE.search(seen_by_asker[1].content.decode())
    with pytest.raises(ValidationError, match="Another admin decides"):
        services.decide_second_factor_reset(actor=cast.admin, request=reset, approve=True)
    reset.refresh_from_db()
    assert reset.outcome == "pending" and not EnrolmentCode.objects.exists()
    assert cast.lawyer.__class__.objects.get(pk=cast.lawyer.pk).has_usable_password()

    page = approver.post(_action(cast.lawyer, "reset-2fa-approve"), {"request": reset.pk})
    code = CODE.search(page.content.decode())[1]
    seen_by_asker.append(asker.get(reverse("manage_user", args=[cast.lawyer.pk])))
    seen_by_asker.append(asker.get(reverse("home"), follow=True))
    seen_by_asker.append(asker.get(reverse("casefiles:audit_list")))
    for response in seen_by_asker:
        assert response.status_code == 200
        assert code not in response.content.decode()
    # The asker, who knows the username but not the code, gets nowhere.
    browser = Client()
    assert _recover(browser, "lawyer", "ABCD-EFGH-JKMN-PQRS").status_code == 400
    assert not _signed_in(browser)


def test_the_only_admin_recovers_an_account_with_no_case_at_once_and_the_entry_says_so(cast):
    admin = _admin_client(cast.admin)
    page = admin.post(
        _action(cast.outsider, "reset-2fa"), {"reason": "forgot the password", "password": "1"}
    )
    assert page.status_code == 200 and CODE.search(page.content.decode())
    entry = AuditEntry.objects.get(action="auth.password_recover_approve")
    assert (entry.actor, entry.details["sole_admin"]) == (cast.admin, True)
    assert EnrolmentCode.objects.get(user=cast.outsider).recovery


def test_the_only_admin_cannot_recover_a_case_members_account_alone(cast):
    """The recovery code stands in for the member's password: with it one admin would
    be the lawyer, in the lawyer's case. With no second admin it waits."""
    admin = _admin_client(cast.admin)
    page = admin.post(
        _action(cast.lawyer, "reset-2fa"),
        {"reason": "forgot the password", "password": "1"},
        follow=True,
    )
    assert not CODE.search(page.content.decode())
    assert "second admin is added" in page.content.decode()
    assert not AuditEntry.objects.filter(action="auth.password_recover_approve").exists()
    assert not EnrolmentCode.objects.filter(user=cast.lawyer).exists()
    assert cast.lawyer.__class__.objects.get(pk=cast.lawyer.pk).has_usable_password()


def test_a_recovery_can_be_refused_and_then_nothing_changes(cast, second_admin):
    device = totp_device(cast.lawyer)
    asked, done = services.ask_second_factor_reset(
        actor=cast.admin, user=cast.lawyer, reason="forgot the password", password=True
    )
    assert done is None
    services.decide_second_factor_reset(actor=second_admin, request=asked, approve=False)
    assert AuditEntry.objects.filter(action="auth.password_recover_refused").count() == 1
    assert cast.lawyer.__class__.objects.get(pk=cast.lawyer.pk).has_usable_password()
    assert TOTPDevice.objects.filter(pk=device.pk).exists()
    assert not EnrolmentCode.objects.exists()


def test_a_recovery_code_works_once(cast, second_admin):
    code = _recovery_code(cast, second_admin)
    response, _device = _finish_recovery(Client(), "lawyer", code)
    assert response.status_code == 200
    again = Client()
    response = _recover(again, "lawyer", code)
    assert response.status_code == 400 and "wrong, used or expired" in response.content.decode()
    assert not _signed_in(again)


def test_a_recovery_code_spent_by_someone_else_meanwhile_sets_nothing(cast, second_admin):
    code = _recovery_code(cast, second_admin)
    slow = Client()
    _recover(slow, "lawyer", code)
    _new_password(slow, "another long passphrase 42")
    slow.get(reverse("login_verify"))
    slow_device = TOTPDevice.objects.get(user=cast.lawyer, confirmed=False)
    # Meanwhile the code is used in another browser (a new enrolment replaces the key).
    response, device = _finish_recovery(Client(), "lawyer", code)
    assert response.status_code == 200
    response = slow.post(reverse("login_verify"), {"code": totp_code(slow_device)})
    assert response.status_code == 302 and response["Location"] == reverse("login")
    assert not _signed_in(slow)
    user = cast.lawyer.__class__.objects.get(pk=cast.lawyer.pk)
    assert user.check_password(NEW_PASSWORD)
    assert list(TOTPDevice.objects.filter(user=user).values_list("pk", flat=True)) == [device.pk]


def test_a_recovery_code_that_expires_during_the_last_step_sets_nothing(cast, second_admin):
    code = _recovery_code(cast, second_admin)
    browser = Client()
    _recover(browser, "lawyer", code)
    _new_password(browser)
    browser.get(reverse("login_verify"))
    device = TOTPDevice.objects.get(user=cast.lawyer, confirmed=False)
    EnrolmentCode.objects.update(expires_at=timezone.now())
    response = browser.post(reverse("login_verify"), {"code": totp_code(device)}, follow=True)
    assert response.redirect_chain[-1][0] == reverse("recover")
    assert "no longer valid" in response.content.decode()
    assert not _signed_in(browser)
    user = cast.lawyer.__class__.objects.get(pk=cast.lawyer.pk)
    assert not user.has_usable_password()
    assert not TOTPDevice.objects.filter(user=user, confirmed=True).exists()


def test_a_recovery_code_expires_and_a_newer_one_replaces_it(cast, second_admin):
    code = _recovery_code(cast, second_admin)
    EnrolmentCode.objects.update(expires_at=timezone.now())
    assert _recover(Client(), "lawyer", code).status_code == 400

    code = _recovery_code(cast, second_admin)
    browser = Client()
    assert _recover(browser, "lawyer", code).status_code == 302
    _recovery_code(cast, second_admin)  # asked and approved again: the first code is void
    assert browser.get(reverse("recover_password"))["Location"] == reverse("recover")
    assert _recover(Client(), "lawyer", code).status_code == 400


def test_codes_of_one_kind_never_serve_as_the_other(cast, second_admin):
    # An ordinary enrolment code (given after a password) does not replace the password...
    enrolment = services.issue_enrolment_code(actor=cast.admin, user=cast.outsider)[0]
    assert _recover(Client(), "outsider", enrolment).status_code == 400
    # ...and a recovery code is for its own user, and not an enrolment code.
    code = _recovery_code(cast, second_admin)
    assert _recover(Client(), "outsider", code).status_code == 400
    assert services.find_enrolment_code(cast.lawyer, code) is None


def test_wrong_recovery_codes_lock_the_pair_out_like_wrong_passwords(settings, cast, second_admin):
    code = _recovery_code(cast, second_admin)
    attacker = Client()
    statuses = [
        _recover(attacker, "lawyer", f"ABCD-EFGH-JKMN-PQR{n}", REMOTE_ADDR=ATTACKER).status_code
        for n in range(2, 2 + settings.AXES_FAILURE_LIMIT)
    ]
    assert statuses == [400] * (settings.AXES_FAILURE_LIMIT - 1) + [429]
    # Locked out: even the right code is not tried from that address...
    response = _recover(attacker, "lawyer", code, REMOTE_ADDR=ATTACKER)
    assert response.status_code == 429 and "Too many failed attempts" in response.content.decode()
    assert RECOVERY_NOTE not in attacker.session
    # ...a wrong password from it counts in the same tally...
    assert _password(Client(), "lawyer", "guess").status_code == 200  # other address: open
    assert (
        Client()
        .post(
            reverse("login"),
            {"username": "lawyer", "password": "guess"},
            REMOTE_ADDR=ATTACKER,
        )
        .status_code
        == 429
    )
    # ...and each try is audited, the one while locked out too; axes keeps no typed code.
    failed = AuditEntry.objects.filter(
        action="auth.password_recover_failed", target_id=str(cast.lawyer.pk)
    )
    assert failed.count() == settings.AXES_FAILURE_LIMIT + 1
    assert failed.filter(details__locked_out=True).count() == 1
    assert set(failed.values_list("ip", flat=True)) == {ATTACKER}
    assert "PQR2" not in str(list(AccessAttempt.objects.values_list("post_data", flat=True)))
    # The user, from their own address, still recovers.
    assert _recover(Client(), "lawyer", code, REMOTE_ADDR="198.51.100.7").status_code == 302


def test_an_unknown_user_and_a_wrong_code_get_the_same_answer(cast, second_admin):
    _recovery_code(cast, second_admin)

    def page(username):
        response = _recover(Client(), username, "ABCD-EFGH-JKMN-PQRS")
        html = response.content.decode().replace(f'value="{username}"', 'value="NAME"')
        return response.status_code, re.sub(r'value="\w+"', "", html)

    assert page("lawyer") == page("nobody-here")
    unknown = AuditEntry.objects.filter(action="auth.password_recover_failed", target_id="")
    assert "nobody-here" not in str(unknown.get().details)


def test_the_recovery_pages_in_arabic(cast, second_admin):
    code = _recovery_code(cast, second_admin)
    browser = Client()
    browser.post(reverse("set_language"), {"language": "ar", "next": "/"})
    html = browser.get(reverse("recover")).content.decode()
    assert '<html lang="ar" dir="rtl">' in html and "رمز الاسترداد" in html
    assert "استرداد" in browser.get(reverse("login")).content.decode()
    _recover(browser, "lawyer", code)
    html = browser.get(reverse("recover_password")).content.decode()
    assert 'dir="rtl"' in html and "اختر كلمة مرور جديدة" in html
    admin = _admin_client(second_admin)
    admin.post(reverse("set_language"), {"language": "ar", "next": "/"})
    html = admin.get(reverse("manage_user", args=[cast.observer.pk])).content.decode()
    assert "كلمة المرور أيضاً" in html
