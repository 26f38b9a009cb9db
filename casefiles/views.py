from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.db.models import OuterRef, Subquery
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET

from . import audit
from .access import Action, active_membership_q, can, get_case_for_user
from .filters import AuditEntryFilter
from .models import AuditEntry, Case, Membership


@require_GET
def case_list(request: HttpRequest) -> HttpResponse:
    my_role = Membership.objects.filter(
        active_membership_q(), user=request.user, case=OuterRef("pk")
    ).values("role")[:1]
    cases = list(Case.objects.visible_to(request.user).annotate(my_role=Subquery(my_role)))
    for case in cases:
        case.my_role_label = Membership.Role(case.my_role).label
    return render(request, "casefiles/case_list.html", {"cases": cases})


@require_GET
def case_detail(request: HttpRequest, ref: str) -> HttpResponse:
    case = get_case_for_user(request.user, ref)
    members = (
        Membership.objects.visible_to(request.user)
        .active()
        .filter(case=case)
        .select_related("user", "granted_by")
        .order_by("role", "user__username")
    )
    audit.record(request.user, "case.view", target=case, case=case)
    return render(
        request,
        "casefiles/case_detail.html",
        {
            "case": case,
            "members": members,
            "my_role": Membership.Role(case.viewer_role),
            "can_manage_members": can(request.user, Action.MANAGE_MEMBERS, case),
        },
    )


@require_GET
def audit_list(request: HttpRequest) -> HttpResponse:
    if not can(request.user, Action.VIEW_AUDIT):
        raise PermissionDenied
    entries = AuditEntry.objects.visible_to(request.user).select_related("case")
    filterset = AuditEntryFilter(request.GET, queryset=entries.order_by("-seq"))
    page = Paginator(filterset.qs, 50).get_page(request.GET.get("page"))
    filters_used = {k: v for k, v in request.GET.items() if k != "page" and v}
    audit.record(request.user, "audit.view", filters=filters_used)
    query = request.GET.copy()
    query.pop("page", None)
    return render(
        request,
        "casefiles/audit_list.html",
        {"filter": filterset, "page": page, "query": query.urlencode()},
    )


@require_GET
def home(request: HttpRequest) -> HttpResponse:
    return redirect("casefiles:case_list" if request.user.is_authenticated else "login")
