"""Sign-in in two steps (password, then a second factor), enrolment, recovery of a
forgotten password with a code two admins issued, and the user's own security page
(sessions, backup codes).

The password step never signs anyone in: it leaves a short-lived note in the session
naming the user, and only the second step calls ``login()``. A locked-out
(username, address) pair sees the sign-in page again with a general message, the same
for accounts that exist and accounts that do not.
"""

from __future__ import annotations

import hashlib
import hmac
import time
from base64 import b32encode
from typing import TYPE_CHECKING, Any

from axes.handlers.proxy import AxesProxyHandler
from django.conf import settings
from django.contrib import admin, messages
from django.contrib.auth import login
from django.contrib.auth.decorators import login_not_required
from django.contrib.auth.forms import AuthenticationForm, SetPasswordForm
from django.contrib.auth.hashers import make_password
from django.contrib.auth.views import LoginView
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods, require_POST

from casefiles import audit
from casefiles.access import account_of

from . import reads, services, twofactor
from .forms import CodeForm, PreferencesForm, RecoveryCodeForm
from .models import Preferences

if TYPE_CHECKING:
    from django.contrib.auth.models import User as Account

PENDING = "athar_2fa_pending"
RECOVERY = "athar_recovery"
_MAX_CODE_ATTEMPTS = 5


def _safe_next(request: HttpRequest, value: str | None) -> str:
    if value and url_has_allowed_host_and_scheme(
        value, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return value
    return reverse(settings.LOGIN_REDIRECT_URL)


class SignInView(LoginView):
    """Step 1: the password. Success leads to the second factor, not into the app."""

    template_name = "accounts/login.html"
    redirect_authenticated_user = True
    form_class = AuthenticationForm

    def form_valid(self, form: AuthenticationForm) -> HttpResponse:
        user = form.get_user()
        if twofactor.is_exempt(user):
            return super().form_valid(form)
        session = self.request.session
        session.cycle_key()
        session[PENDING] = {
            "user": user.pk,
            "backend": user.backend,
            "at": int(time.time()),
            "next": _safe_next(self.request, self.get_redirect_url()),
            "tries": 0,
        }
        audit.record(None, "auth.password_ok", target=user)
        return redirect("login_verify")


def _pending_user(request: HttpRequest) -> tuple[dict, Any] | None:
    """The sign-in waiting for its second step, and whose it is; None when there is none
    (or it expired, or its account can no longer sign in)."""
    pending = request.session.get(PENDING)
    if not pending or time.time() - pending["at"] > settings.ATHAR_2FA_PENDING_SECONDS:
        request.session.pop(PENDING, None)
        return None
    user = reads.active_account(pending["user"])
    if user is not None and pending.get("recovery") and twofactor.has_confirmed_device(user):
        # A recovery ends with a new device; it never opens one set up meanwhile.
        user = None
    if user is None:
        request.session.pop(PENDING, None)
        return None
    return pending, user


def _finish(request: HttpRequest, pending: dict, user: Account, device: Any) -> None:
    request.session.pop(PENDING, None)
    user.otp_device = device  # type: ignore[attr-defined]  # django-otp keeps it in the session
    login(request, user, backend=pending["backend"])


@login_not_required
@require_http_methods(["GET", "POST"])
def login_verify(request: HttpRequest) -> HttpResponse:
    """Step 2: a code from the authenticator app or a backup code; or, on the very
    first sign-in, enrolment of an authenticator app."""
    found = _pending_user(request)
    if found is None:
        return redirect("login")
    pending, user = found
    if not twofactor.has_confirmed_device(user):
        return _enrol(request, pending, user)
    form = CodeForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        device = twofactor.verify_code(user, form.cleaned_data["code"])
        if device is not None:
            _finish(request, pending, user, device)
            return redirect(pending["next"])
        if _wrong_code(request, pending, user, "auth.second_factor_failed"):
            return redirect("login")
        form.add_error("code", _("The code is wrong or has been used."))
    return render(
        request,
        "accounts/login_verify.html",
        {"form": form, "has_security_key": twofactor.has_security_key(user)},
    )


def _wrong_code(request: HttpRequest, pending: dict, user: Account, action: str) -> bool:
    """Count a wrong code against this sign-in; True when it has had too many."""
    pending["tries"] += 1
    request.session[PENDING] = pending
    audit.record(None, action, target=user, tries=pending["tries"])
    if pending["tries"] >= _MAX_CODE_ATTEMPTS:
        request.session.pop(PENDING, None)
        messages.error(request, _("Too many wrong codes. Sign in again."))
        return True
    return False


def _enrolment_code(request: HttpRequest, pending: dict, user: Account) -> HttpResponse:
    """Before any key is made or shown: the one-time code an admin handed over."""
    form = CodeForm(request.POST or None)
    form.fields["code"].label = _("Enrolment code")
    if request.method == "POST" and form.is_valid():
        found = services.find_enrolment_code(user, form.cleaned_data["code"])
        if found is not None:
            pending["enrolment_code"] = found.pk
            request.session[PENDING] = pending
            return redirect("login_verify")
        if _wrong_code(request, pending, user, "auth.enrolment_code_failed"):
            return redirect("login")
        form.add_error("code", _("This enrolment code is wrong, used or expired."))
    return render(
        request,
        "accounts/enrolment_code.html",
        {"form": form},
        status=400 if form.errors else 200,
    )


def _enrol(request: HttpRequest, pending: dict, user: Account) -> HttpResponse:
    if not pending.get("enrolment_code"):
        return _enrolment_code(request, pending, user)
    device = services.start_totp_enrolment(user=user, device_id=pending.get("device"))
    if pending.get("device") != device.pk:
        pending["device"] = device.pk
        request.session[PENDING] = pending
    form = CodeForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            codes = services.confirm_totp_device(
                user=user,
                device=device,
                code=form.cleaned_data["code"],
                enrolment_code=pending["enrolment_code"],
                new_password=pending.get("new_password"),
            )
        except services.EnrolmentCodeSpent as exc:
            messages.error(request, " ".join(exc.messages))
            if pending.get("recovery"):  # used or replaced meanwhile: start again
                request.session.pop(PENDING, None)
                return redirect("recover")
            pending.pop("enrolment_code")
            request.session[PENDING] = pending
            return redirect("login_verify")
        except ValidationError as exc:
            form.add_error("code", exc)
        else:
            device.refresh_from_db()
            _finish(request, pending, user, device)
            return render(
                request,
                "accounts/backup_codes.html",
                {"codes": codes, "next": pending["next"]},
            )
    secret = b32encode(device.bin_key).decode()
    return render(
        request,
        "accounts/enrol.html",
        {"form": form, "qr": twofactor.qr_svg(device), "secret": secret},
    )


# Recovery of a forgotten password ---------------------------------------------------


def _recovery_failed(
    request: HttpRequest, username: str, user: Account | None, **details: Any
) -> None:
    """A wrong recovery code counts against the (username, address) pair as a wrong
    password does (django-axes), and is audited; so is a try while locked out."""
    if not details.get("locked_out"):
        AxesProxyHandler.user_login_failed(recover, {"username": username}, request)
    if user is not None:
        audit.record(None, "auth.password_recover_failed", target=user, **details)
    else:  # as for a failed sign-in: a name that is no account is kept as a keyed digest
        digest = hmac.new(settings.SECRET_KEY.encode(), username.encode(), hashlib.sha256)
        audit.record(
            None,
            "auth.password_recover_failed",
            unknown_username_hmac=digest.hexdigest()[:32],
            **details,
        )


@login_not_required
@require_http_methods(["GET", "POST"])
def recover(request: HttpRequest) -> HttpResponse:
    """A forgotten password, step 1: the username and the recovery code an admin handed
    over (two admins decided the recovery). Like the password step it signs nobody in;
    the user then chooses a new password and sets up a new authenticator. The answer is
    the same whether the account exists, and the lockout counts wrong codes."""
    form = RecoveryCodeForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        username = form.cleaned_data["username"]
        credentials = {"username": username}
        user = reads.active_account_named(username)
        if not AxesProxyHandler.is_allowed(request, credentials):
            _recovery_failed(request, username, user, locked_out=True)
            return lockout_response(request, credentials)
        found = (
            services.find_enrolment_code(user, form.cleaned_data["code"], recovery=True)
            if user is not None
            else None
        )
        if found is not None and user is not None:
            session = request.session
            session.cycle_key()
            session.pop(PENDING, None)
            session[RECOVERY] = {"user": user.pk, "code": found.pk, "at": int(time.time())}
            audit.record(None, "auth.password_recover_start", target=user)
            return redirect("recover_password")
        _recovery_failed(request, username, user)
        if not AxesProxyHandler.is_allowed(request, credentials):
            return lockout_response(request, credentials)
        form.add_error(
            "code", _("This recovery code is wrong, used or expired, or it is not for this user.")
        )
    return render(
        request, "accounts/recover.html", {"form": form}, status=400 if form.errors else 200
    )


def _recovering(request: HttpRequest) -> tuple[dict | None, Any]:
    note = request.session.get(RECOVERY)
    user = None
    if note and time.time() - note["at"] <= settings.ATHAR_2FA_PENDING_SECONDS:
        user = reads.active_account(note["user"])
        if user is not None and not services.recovery_code_usable(user, note["code"]):
            user = None
    if user is None:
        request.session.pop(RECOVERY, None)
        return None, None
    return note, user


@login_not_required
@require_http_methods(["GET", "POST"])
def recover_password(request: HttpRequest) -> HttpResponse:
    """Step 2: a new password (Django's validators). It is kept, hashed, in this session
    only, and becomes the account's password with the new authenticator (step 3, the
    enrolment page), in the transaction that spends the recovery code."""
    note, user = _recovering(request)
    if note is None or user is None:
        return redirect("recover")
    form = SetPasswordForm(user, request.POST or None)
    if request.method == "POST" and form.is_valid():
        request.session.pop(RECOVERY, None)
        request.session[PENDING] = {
            "user": user.pk,
            "backend": "django.contrib.auth.backends.ModelBackend",
            "at": int(time.time()),
            "next": reverse(settings.LOGIN_REDIRECT_URL),
            "tries": 0,
            "recovery": True,
            "enrolment_code": note["code"],
            "new_password": make_password(form.cleaned_data["new_password1"]),
        }
        audit.record(None, "auth.password_recover_choose", target=user)
        return redirect("login_verify")
    return render(
        request,
        "accounts/recover_password.html",
        {"form": form, "subject": user},
        status=400 if form.errors else 200,
    )


def lockout_response(request: HttpRequest, credentials: dict | None = None, *args: Any):
    """django-axes calls this for a locked-out pair: the sign-in page, with a notice."""
    form = AuthenticationForm(request, initial={"username": request.POST.get("username", "")})
    return render(
        request,
        "accounts/login.html",
        {"form": form, "locked_out": True, "next": request.POST.get("next", "")},
        status=429,
    )


@require_http_methods(["GET"])
def security(request: HttpRequest) -> HttpResponse:
    """The user's own sessions, backup codes and preferences."""
    account = account_of(request)
    sessions = reads.open_sessions(account)
    remaining = reads.backup_codes_left(account)
    keys = reads.security_keys(account)
    preferences = PreferencesForm(initial={"blur_graphic": Preferences.blurs_graphic(account)})
    return render(
        request,
        "accounts/security.html",
        {
            "sessions": sessions,
            "current_key": request.session.session_key,
            "backup_codes_left": remaining,
            "security_keys": keys,
            "preferences": preferences,
        },
    )


@require_POST
def sign_out_everywhere(request: HttpRequest) -> HttpResponse:
    count = services.end_user_sessions(
        actor=account_of(request), user=account_of(request), keep=request.session.session_key
    )
    messages.success(request, _("Signed out of %(n)d other sessions.") % {"n": count})
    return redirect("security")


@require_POST
def renew_backup_codes(request: HttpRequest) -> HttpResponse:
    codes = services.regenerate_backup_codes(user=account_of(request))
    return render(
        request,
        "accounts/backup_codes.html",
        {"codes": codes, "next": reverse("security")},
    )


@login_not_required
@require_http_methods(["GET", "HEAD"])
def admin_login(request: HttpRequest) -> HttpResponse:
    """The Django admin's sign-in address. There is one sign-in page for everyone, so a
    visitor who is not signed in is sent there; a signed-in user whom the admin does not
    let in is told so here, instead of being sent to sign in again (which, signed in
    already, sent them back to the admin, and round again)."""
    if not request.user.is_authenticated:
        query = request.META.get("QUERY_STRING", "")
        return redirect(reverse("login") + (f"?{query}" if query else ""))
    if admin.site.has_permission(request):
        return redirect(
            _safe_next(request, request.GET.get("next"))
            if "next" in request.GET
            else reverse("admin:index")
        )
    return render(
        request,
        "403.html",
        {
            "reason": _(
                "Your account has no administration rights. Ask an administrator if you need them."
            )
        },
        status=403,
    )
