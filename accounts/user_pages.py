"""The admins' pages about users: the list, each user's memberships across cases,
sessions and second factor, and what an admin does to an account (end its sessions,
deactivate it, ask for or decide on a reset, issue an enrolment code); and what a user
sets for themselves (their preferences, a form on their own security page)."""

from __future__ import annotations

import re

from django.contrib import messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods, require_POST

from casefiles import access
from casefiles import services as casefiles_services
from casefiles.access import account_of

from . import reads, services, twofactor
from .forms import PreferencesForm


def _require_admin(request: HttpRequest) -> None:
    if not access.is_system_admin(request.user):
        raise PermissionDenied


@require_http_methods(["GET"])
def user_list(request: HttpRequest) -> HttpResponse:
    _require_admin(request)
    users = reads.users_with_memberships()
    enrolled = reads.enrolled_user_ids()
    rows = list(users)
    for user in rows:
        user.has_2fa = user.pk in enrolled  # type: ignore[attr-defined]  # for the template
    return render(request, "accounts/manage_user_list.html", {"users": rows})


@require_http_methods(["GET"])
def user_detail(request: HttpRequest, pk: int) -> HttpResponse:
    _require_admin(request)
    subject = reads.get_account(pk)
    now = timezone.now()
    memberships = reads.memberships_of(account_of(request), subject)
    for m in memberships:
        m.in_force = m.revoked_at is None and (m.expires_at is None or m.expires_at > now)
    sessions = reads.open_sessions(subject)
    return render(
        request,
        "accounts/manage_user_detail.html",
        {
            "subject": subject,
            "memberships": memberships,
            "sessions": sessions,
            "has_2fa": twofactor.has_confirmed_device(subject),
            "code_needs_two_admins": services.code_needs_two_admins(subject),
            "reset": reads.pending_reset(subject),
        },
    )


def _enrolment_code_page(request, subject, code, expires_at, reset=None) -> HttpResponse:
    """The code, once, in this response alone: never in a message (a cookie) or a URL.
    (Every page of the app is sent ``Cache-Control: no-store``.) After a reset (``reset``,
    the decided request), only to the admin who approved it."""
    return render(
        request,
        "accounts/enrolment_code_issued.html",
        {"subject": subject, "code": code, "expires_at": expires_at, "reset": reset},
    )


@require_POST
def user_action(request: HttpRequest, pk: int, action: str) -> HttpResponse:
    _require_admin(request)
    subject = reads.get_account(pk)
    try:
        if action == "end-sessions":
            services.end_user_sessions(actor=account_of(request), user=subject)
            messages.success(request, _("All sessions of this user were ended."))
        elif action == "deactivate":
            services.deactivate_user(actor=account_of(request), user=subject)
            messages.success(request, _("The account was deactivated; its history is kept."))
        elif action == "reset-2fa":
            asked, done = services.ask_second_factor_reset(
                actor=account_of(request),
                user=subject,
                reason=request.POST.get("reason", ""),
                password=request.POST.get("password") == "1",
            )
            if done is None:  # the code goes to whoever approves, never to the asker
                messages.success(request, _("Asked: another admin decides on the reset."))
                if casefiles_services.only_admin(account_of(request), subject):
                    messages.warning(
                        request,
                        _(
                            "This installation has no other admin, and this account has "
                            "access to a case: the reset waits until a second admin is added "
                            "(README, section Two admins)."
                        ),
                    )
            else:  # no other admin to ask
                return _enrolment_code_page(request, subject, *done, reset=asked)
        elif action in ("reset-2fa-approve", "reset-2fa-refuse"):
            asked_pk = request.POST.get("request", "")
            if not re.fullmatch(r"[0-9]{1,18}", asked_pk):
                raise Http404
            pending = reads.get_reset(subject, int(asked_pk))
            done = services.decide_second_factor_reset(
                actor=account_of(request), request=pending, approve=action == "reset-2fa-approve"
            )
            if done is not None:
                return _enrolment_code_page(request, subject, *done, reset=pending)
            messages.success(request, _("The reset will not be done."))
        elif action == "enrolment-code":
            if twofactor.has_confirmed_device(subject):
                raise ValidationError(_("This user has a second factor; reset it first."))
            if services.code_needs_two_admins(subject):
                raise ValidationError(_("This account has access: ask, and another admin decides."))
            code, expires_at = services.issue_enrolment_code(
                actor=account_of(request), user=subject
            )
            return _enrolment_code_page(request, subject, code, expires_at)
        else:
            raise Http404
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
    return redirect("manage_user", pk=subject.pk)


@require_POST
def own_preferences(request: HttpRequest) -> HttpResponse:
    """The signed-in user's own preferences, from their security page."""
    form = PreferencesForm(request.POST)
    if form.is_valid() and services.set_blur_graphic(
        actor=account_of(request), blur_graphic=form.cleaned_data["blur_graphic"]
    ):
        messages.success(request, _("Your preferences were saved."))
    return redirect("security")
