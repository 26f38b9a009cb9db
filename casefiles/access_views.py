"""Access workflows: asking to join a case, deciding on requests, and the admins' pages
for users, their memberships across cases, sessions, and memberships about to expire.

Deciding is for a lead of the case or a system admin (``Action.MANAGE_MEMBERS``); any
other user gets 404 for a request, as for a case they may not know exists.
"""

from __future__ import annotations

import re
from datetime import timedelta

from django.contrib import messages
from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied, ValidationError
from django.db.models import Count, Q
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods, require_POST
from django_otp.plugins.otp_totp.models import TOTPDevice
from django_otp_webauthn.models import WebAuthnCredential

from . import access, services, twofactor
from .forms import AccessRequestForm, CaseForm, DecisionForm, GrantForm, MembershipChangeForm
from .models import (
    AccessRequest,
    GrantRequest,
    Membership,
    SecondFactorReset,
    UserSession,
)

EXPIRING_DAYS = 14


def _require_admin(request: HttpRequest) -> None:
    if not access.is_system_admin(request.user):
        raise PermissionDenied


@require_http_methods(["GET", "POST"])
def request_access(request: HttpRequest) -> HttpResponse:
    """Ask to join a case by its reference. The answer never tells whether it exists."""
    form = AccessRequestForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        case = access.case_for_access_request(form.cleaned_data["reference"])
        if case is not None and access.role_in(request.user, case) is None:
            try:
                services.request_access(
                    user=request.user, case=case, reason=form.cleaned_data["reason"]
                )
            except ValidationError as exc:
                form.add_error(None, exc)
        if not form.errors:
            messages.success(
                request,
                _(
                    "Your request has been passed on. If the reference is right, a lead of "
                    "the case or an administrator will decide; the case then appears "
                    "under My cases."
                ),
            )
            return redirect("casefiles:case_list")
    return render(request, "casefiles/access_request_form.html", {"form": form})


@require_http_methods(["GET"])
def access_request_list(request: HttpRequest) -> HttpResponse:
    if not (access.is_system_admin(request.user) or access.led_case_ids(request.user).exists()):
        raise PermissionDenied
    pending = (
        AccessRequest.objects.decidable_by(request.user)
        .filter(status=AccessRequest.Status.PENDING)
        .select_related("user", "case")
        .order_by("requested_at")
    )
    grants = (
        GrantRequest.objects.filter(outcome=GrantRequest.Outcome.PENDING)
        .select_related("user", "case", "requested_by")
        .order_by("requested_at")
        if access.is_system_admin(request.user)
        else GrantRequest.objects.none()
    )
    return render(
        request, "casefiles/access_request_list.html", {"pending": pending, "grants": grants}
    )


@require_http_methods(["GET", "POST"])
def access_request_decide(request: HttpRequest, pk: int) -> HttpResponse:
    req = (
        AccessRequest.objects.decidable_by(request.user)
        .select_related("user", "case")
        .filter(pk=pk)
        .first()
    )
    if req is None:
        raise Http404
    form = DecisionForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        approve = "approve" in request.POST
        try:
            services.decide_access_request(
                actor=request.user,
                access_request=req,
                approve=approve,
                role=form.cleaned_data["role"] or None,
                expires_at=form.expires_at(),
                note=form.cleaned_data["note"],
            )
        except ValidationError as exc:
            if hasattr(exc, "error_dict"):
                for field, errors in exc.error_dict.items():
                    target = "expires_on" if field == "expires_at" else field
                    form.add_error(target if target in form.fields else None, errors)
            else:
                form.add_error(None, exc)
        else:
            if getattr(req, "pending_grant", None) is not None:
                _granted_or_asked(request, req.pending_grant)
            else:
                messages.success(
                    request, _("Access granted.") if approve else _("Request refused.")
                )
            return redirect("access_requests")
    return render(request, "casefiles/access_request_decide.html", {"req": req, "form": form})


# System admins ----------------------------------------------------------------------


@require_http_methods(["GET"])
def user_list(request: HttpRequest) -> HttpResponse:
    _require_admin(request)
    now = timezone.now()
    users = (
        get_user_model()
        .objects.order_by("username")
        .annotate(
            n_memberships=Count(
                "case_memberships",
                filter=Q(case_memberships__revoked_at__isnull=True)
                & (
                    Q(case_memberships__expires_at__isnull=True)
                    | Q(case_memberships__expires_at__gt=now)
                ),
                distinct=True,
            ),
        )
    )
    enrolled = set(
        TOTPDevice.objects.filter(confirmed=True).values_list("user_id", flat=True)
    ) | set(WebAuthnCredential.objects.filter(confirmed=True).values_list("user_id", flat=True))
    users = list(users)
    for user in users:
        user.has_2fa = user.pk in enrolled
    return render(request, "casefiles/manage_user_list.html", {"users": users})


@require_http_methods(["GET"])
def user_detail(request: HttpRequest, pk: int) -> HttpResponse:
    _require_admin(request)
    subject = get_object_or_404(get_user_model(), pk=pk)
    now = timezone.now()
    memberships = (
        Membership.objects.manageable_by(request.user)
        .filter(user=subject)
        .select_related("case", "granted_by", "revoked_by")
        .order_by("-granted_at")
    )
    for m in memberships:
        m.in_force = m.revoked_at is None and (m.expires_at is None or m.expires_at > now)
    sessions = UserSession.objects.filter(user=subject, ended_at__isnull=True)
    return render(
        request,
        "casefiles/manage_user_detail.html",
        {
            "subject": subject,
            "memberships": memberships,
            "sessions": sessions,
            "has_2fa": twofactor.has_confirmed_device(subject),
            "code_needs_two_admins": services.code_needs_two_admins(subject),
            "reset": SecondFactorReset.objects.filter(
                user=subject, outcome=SecondFactorReset.Outcome.PENDING
            )
            .select_related("requested_by")
            .first(),
        },
    )


def _enrolment_code_page(request, subject, code, expires_at, reset=None) -> HttpResponse:
    """The code, once, in this response alone: never in a message (a cookie) or a URL.
    (Every page of the app is sent ``Cache-Control: no-store``.) After a reset (``reset``,
    the decided request), only to the admin who approved it."""
    return render(
        request,
        "casefiles/enrolment_code_issued.html",
        {"subject": subject, "code": code, "expires_at": expires_at, "reset": reset},
    )


@require_POST
def user_action(request: HttpRequest, pk: int, action: str) -> HttpResponse:
    _require_admin(request)
    subject = get_object_or_404(get_user_model(), pk=pk)
    try:
        if action == "end-sessions":
            services.end_user_sessions(actor=request.user, user=subject)
            messages.success(request, _("All sessions of this user were ended."))
        elif action == "deactivate":
            services.deactivate_user(actor=request.user, user=subject)
            messages.success(request, _("The account was deactivated; its history is kept."))
        elif action == "reset-2fa":
            asked, done = services.ask_second_factor_reset(
                actor=request.user,
                user=subject,
                reason=request.POST.get("reason", ""),
                password=request.POST.get("password") == "1",
            )
            if done is None:  # the code goes to whoever approves, never to the asker
                messages.success(request, _("Asked: another admin decides on the reset."))
            else:  # no other admin to ask
                return _enrolment_code_page(request, subject, *done, reset=asked)
        elif action in ("reset-2fa-approve", "reset-2fa-refuse"):
            asked = request.POST.get("request", "")
            if not re.fullmatch(r"[0-9]{1,18}", asked):
                raise Http404
            pending = get_object_or_404(SecondFactorReset, pk=int(asked), user=subject)
            done = services.decide_second_factor_reset(
                actor=request.user, request=pending, approve=action == "reset-2fa-approve"
            )
            if done is not None:
                return _enrolment_code_page(request, subject, *done, reset=pending)
            messages.success(request, _("The reset will not be done."))
        elif action == "enrolment-code":
            if twofactor.has_confirmed_device(subject):
                raise ValidationError(_("This user has a second factor; reset it first."))
            if services.code_needs_two_admins(subject):
                raise ValidationError(_("This account has access: ask, and another admin decides."))
            code, expires_at = services.issue_enrolment_code(actor=request.user, user=subject)
            return _enrolment_code_page(request, subject, code, expires_at)
        else:
            raise Http404
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
    return redirect("manage_user", pk=subject.pk)


@require_POST
def membership_revoke(request: HttpRequest, pk: int) -> HttpResponse:
    membership = (
        Membership.objects.manageable_by(request.user)
        .select_related("case", "user")
        .filter(pk=pk)
        .first()
    )
    if membership is None:
        raise Http404
    services.revoke_membership(
        actor=request.user, membership=membership, reason=request.POST.get("reason", "")
    )
    messages.success(request, _("Access revoked."))
    if access.is_system_admin(request.user):
        return redirect("manage_user", pk=membership.user_id)
    return redirect("access_requests")


@require_http_methods(["GET"])
def expiring_memberships(request: HttpRequest) -> HttpResponse:
    _require_admin(request)
    now = timezone.now()
    soon = (
        Membership.objects.manageable_by(request.user)
        .active()
        .filter(expires_at__lte=now + timedelta(days=EXPIRING_DAYS))
        .select_related("user", "case")
        .order_by("expires_at")
    )
    return render(
        request,
        "casefiles/manage_expiring.html",
        {"memberships": soon, "days": EXPIRING_DAYS},
    )


# Cases and their members ------------------------------------------------------------


def _add_service_errors(form, exc: ValidationError) -> None:
    if hasattr(exc, "error_dict"):
        for field, errors in exc.error_dict.items():
            target = "expires_on" if field == "expires_at" else field
            form.add_error(target if target in form.fields else None, errors)
    else:
        form.add_error(None, exc)


def _granted_or_asked(request: HttpRequest, result) -> None:
    if isinstance(result, GrantRequest):
        messages.warning(
            request,
            _(
                "Not granted yet: this grant needs a second admin. It waits for another "
                "admin's approval on the Access requests page."
            ),
        )
    else:
        messages.success(request, _("Access granted."))


@require_http_methods(["GET"])
def manage_case_list(request: HttpRequest) -> HttpResponse:
    """Every case, by reference and title (never its content), for admins to manage."""
    _require_admin(request)
    cases = (
        access.cases_for_access_management(request.user)
        .annotate(
            n_members=Count(
                "memberships", filter=Q(access.active_membership_q("memberships__")), distinct=True
            ),
            n_pending=Count(
                "grant_requests",
                filter=Q(grant_requests__outcome=GrantRequest.Outcome.PENDING),
                distinct=True,
            ),
        )
        .only("reference", "title", "status", "created_at")
    )
    return render(request, "casefiles/manage_case_list.html", {"cases": cases})


@require_http_methods(["GET", "POST"])
def case_create(request: HttpRequest) -> HttpResponse:
    """An admin opens a case; its members are then granted on its members page."""
    _require_admin(request)
    form = CaseForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            case = services.create_case(actor=request.user, **form.cleaned_data)
        except ValidationError as exc:
            _add_service_errors(form, exc)
        else:
            messages.success(request, _("Case opened. Now grant access to its lead."))
            return redirect("case_members", ref=case.reference)
    return render(request, "casefiles/case_form.html", {"form": form})


@require_http_methods(["GET", "POST"])
def case_members(request: HttpRequest, ref: str) -> HttpResponse:
    """Who has access to a case, and a form to grant it: for its lead and for admins."""
    case = access.get_case_for_access_management(request.user, ref)
    form = GrantForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            result = services.grant_or_ask(
                actor=request.user,
                case=case,
                user=form.user,
                role=form.cleaned_data["role"],
                expires_at=form.expires_at(),
                note=form.cleaned_data["note"],
            )
        except ValidationError as exc:
            _add_service_errors(form, exc)
        else:
            _granted_or_asked(request, result)
            return redirect("case_members", ref=case.reference)
    members = (
        Membership.objects.manageable_by(request.user)
        .active()
        .filter(case=case)
        .select_related("user", "granted_by")
        .order_by("role", "user__username")
    )
    pending = (
        GrantRequest.objects.filter(case=case, outcome=GrantRequest.Outcome.PENDING)
        .select_related("user", "requested_by")
        .order_by("requested_at")
    )
    return render(
        request,
        "casefiles/case_members.html",
        {
            "case": case,
            "members": members,
            "pending": pending,
            "form": form,
            "is_admin": access.is_system_admin(request.user),
        },
    )


@require_http_methods(["GET", "POST"])
def membership_change(request: HttpRequest, ref: str, membership_id: int) -> HttpResponse:
    case = access.get_case_for_access_management(request.user, ref)
    membership = (
        Membership.objects.manageable_by(request.user)
        .active()
        .filter(case=case, pk=membership_id)
        .select_related("user")
        .first()
    )
    if membership is None:
        raise Http404
    initial = {
        "role": membership.role,
        "expires_on": membership.expires_at.date() if membership.expires_at else None,
    }
    form = MembershipChangeForm(request.POST or None, initial=initial)
    if request.method == "POST" and form.is_valid():
        try:
            result = services.grant_or_ask(
                actor=request.user,
                case=case,
                user=membership.user,
                role=form.cleaned_data["role"],
                expires_at=form.expires_at(membership.expires_at),
                membership=membership,
            )
        except ValidationError as exc:
            _add_service_errors(form, exc)
        else:
            if isinstance(result, GrantRequest):
                _granted_or_asked(request, result)
            else:
                messages.success(request, _("Access changed."))
            return redirect("case_members", ref=case.reference)
    return render(
        request,
        "casefiles/membership_form.html",
        {"case": case, "membership": membership, "form": form},
    )


@require_POST
def grant_decide(request: HttpRequest, pk: int, decision: str) -> HttpResponse:
    """Another admin approves or refuses a grant; whoever asked may withdraw it."""
    _require_admin(request)
    if decision not in ("approve", "refuse"):
        raise Http404
    pending = get_object_or_404(GrantRequest, pk=pk)
    try:
        done = services.decide_grant(
            actor=request.user, request=pending, approve=decision == "approve"
        )
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
    else:
        if done is not None:
            messages.success(request, _("Access granted."))
        else:
            messages.success(request, _("The grant will not be made."))
    return redirect("access_requests")
