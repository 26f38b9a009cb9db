"""Access workflows: asking to join a case, deciding on requests, and the admins' pages
for cases, their members, and memberships about to expire (the pages about users
themselves are in ``accounts.user_pages``).

Deciding is for a lead of the case or a system admin (``Action.MANAGE_MEMBERS``); any
other user gets 404 for a request, as for a case they may not know exists.
"""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.db.models import Count, Q
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods, require_POST

from . import access, once, reads, services
from .access import account_of
from .forms import AccessRequestForm, CaseForm, DecisionForm, GrantForm, MembershipChangeForm
from .models import (
    GrantRequest,
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
                    user=account_of(request), case=case, reason=form.cleaned_data["reason"]
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
    pending = reads.pending_requests(request.user)
    # A lead consents to the grants in their cases; a system admin to any.
    grants = reads.pending_grants(request.user, admin=access.is_system_admin(request.user))
    return render(
        request, "casefiles/access_request_list.html", {"pending": pending, "grants": grants}
    )


@require_http_methods(["GET", "POST"])
def access_request_decide(request: HttpRequest, pk: int) -> HttpResponse:
    req = (
        reads.decidable_requests(request.user).select_related("user", "case").filter(pk=pk).first()
    )
    if req is None:
        raise Http404
    form = DecisionForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        approve = "approve" in request.POST
        try:
            services.decide_access_request(
                actor=account_of(request),
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


@require_POST
def membership_revoke(request: HttpRequest, pk: int) -> HttpResponse:
    membership = (
        reads.manageable_memberships(request.user)
        .select_related("case", "user")
        .filter(pk=pk)
        .first()
    )
    if membership is None:
        raise Http404
    services.revoke_membership(
        actor=account_of(request), membership=membership, reason=request.POST.get("reason", "")
    )
    messages.success(request, _("Access revoked."))
    if access.is_system_admin(request.user):
        return redirect("manage_user", pk=membership.user_id)
    return redirect("access_requests")


@require_http_methods(["GET"])
def expiring_memberships(request: HttpRequest) -> HttpResponse:
    _require_admin(request)
    soon = reads.expiring_memberships(request.user, EXPIRING_DAYS)
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
                "Not granted yet: this grant needs a second person. It waits for another "
                "admin's approval or the consent of the case's lead, on the Access requests "
                "page."
            ),
        )
        if services.nobody_to_decide(account_of(request), result.case, result.user):
            messages.warning(
                request,
                _(
                    "Nobody can approve it yet: this installation has no other admin and the "
                    "case no lead who could consent. Add a second admin (README, section Two "
                    "admins); the grant waits until then."
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


@once.creates
@require_http_methods(["GET", "POST"])
def case_create(request: HttpRequest) -> HttpResponse:
    """An admin opens a case; its members are then granted on its members page."""
    _require_admin(request)
    form = CaseForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            case = services.create_case(actor=account_of(request), **form.cleaned_data)
        except ValidationError as exc:
            _add_service_errors(form, exc)
        else:
            messages.success(request, _("Case opened. Now grant access to its lead."))
            return redirect("case_members", ref=case.reference)
    return render(request, "casefiles/case_form.html", {"form": form})


@once.creates
@require_http_methods(["GET", "POST"])
def case_members(request: HttpRequest, ref: str) -> HttpResponse:
    """Who has access to a case, and a form to grant it: for its lead and for admins."""
    case = access.get_case_for_access_management(request.user, ref)
    form = GrantForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            result = services.grant_or_ask(
                actor=account_of(request),
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
        reads.manageable_memberships(request.user)
        .active()
        .filter(case=case)
        .select_related("user", "granted_by")
        .order_by("role", "user__username")
    )
    pending = reads.pending_grants_in(case)
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
        reads.manageable_memberships(request.user)
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
                actor=account_of(request),
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
    """Another admin, or the case's lead, approves or refuses a grant; whoever asked may
    withdraw it."""
    if decision not in ("approve", "refuse"):
        raise Http404
    pending = reads.grant_request(pk)
    if pending is None:
        raise Http404
    if not services.can_decide_grant(account_of(request), pending):
        raise PermissionDenied
    try:
        done = services.decide_grant(
            actor=account_of(request), request=pending, approve=decision == "approve"
        )
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
    else:
        if done is not None:
            messages.success(request, _("Access granted."))
        else:
            messages.success(request, _("The grant will not be made."))
    return redirect("access_requests")
