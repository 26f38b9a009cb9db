import csv
import json
from datetime import datetime
from itertools import chain

from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET

from . import audit, reads
from .access import (
    Action,
    account_of,
    can,
    get_case_for_user,
    is_system_admin,
)
from .access_views import EXPIRING_DAYS
from .exports import csv_cell
from .filters import AuditEntryFilter
from .models import (
    Membership,
)
from .paging import Key, Keyset, list_query, number

AUDIT_PAGES = Keyset(Key("-seq", number), size=50)
TARGET_AUDIT_PAGES = Keyset(Key("-seq", number), size=100)


@require_GET
def case_list(request: HttpRequest) -> HttpResponse:
    cases = reads.cases_with_role(account_of(request))
    return render(request, "casefiles/case_list.html", {"cases": cases})


@require_GET
def case_detail(request: HttpRequest, ref: str) -> HttpResponse:
    case = get_case_for_user(request.user, ref)
    can_view_members = can(request.user, Action.VIEW_MEMBERS, case)
    members = reads.members_of(request.user, case) if can_view_members else reads.no_members()
    audit.record(request.user, "case.view", target=case, case=case)
    return render(
        request,
        "casefiles/case_detail.html",
        {
            "case": case,
            "members": members,
            "can_view_members": can_view_members,
            "my_role": Membership.Role(case.viewer_role),  # type: ignore[attr-defined]  # annotated
            "can_manage_members": can(request.user, Action.MANAGE_MEMBERS, case),
            "can_view_case_audit": can(request.user, Action.VIEW_CASE_AUDIT, case),
        },
    )


def _audit_filterset(request: HttpRequest) -> AuditEntryFilter:
    if not can(request.user, Action.VIEW_AUDIT):
        raise PermissionDenied
    entries = reads.audit_entries(request.user).select_related("case")
    return AuditEntryFilter(request.GET, queryset=entries.order_by("-seq"))


def _head_seq() -> int:
    return reads.head_seq()


@require_GET
def audit_list(request: HttpRequest) -> HttpResponse:
    """The log, newest first, 50 entries a page, by entry number: each view of the log
    adds an entry of its own, and a page that follows another by number (not by
    position) neither repeats nor skips an entry when the log grows between them."""
    filterset = _audit_filterset(request)
    # A filter the form refuses (an action no app declares, a case that is not one) lists
    # nothing and says why: leaving it out would show the whole log as if it matched.
    valid = filterset.is_valid()
    entries = filterset.qs if valid else reads.no_entries()
    query = list_query(request, "upto")
    page = AUDIT_PAGES.page(entries, request, query=query, total=False)
    filters_used = {k: v for k, v in request.GET.items() if k not in ("after", "before") and v}
    audit.record(request.user, "audit.view", filters=filters_used)
    return render(
        request,
        "casefiles/audit_list.html",
        {
            "filter": filterset,
            "filter_refused": not valid,
            "page": page,
            "query": query,
        },
        status=200 if valid else 400,
    )


EXPORT_FIELDS = (*audit.HASHED_FIELDS, "details_sha256", "prev_hash", "hash")
_STORED_FIELDS = (*audit.HASHED_FIELDS, "prev_hash", "hash")
_DETAILS = audit.HASHED_FIELDS.index("details")
_CASE = audit.HASHED_FIELDS.index("case_id")


def _export_rows(rows, readable_cases: set[int]):
    """Each entry with the digest of its details; the details themselves only where
    the reader may see that case's content (a system admin manages access, and reads
    no case content unless a member)."""
    for row in rows:
        digest = audit.details_sha256(row[_DETAILS])
        if row[_CASE] is not None and row[_CASE] not in readable_cases:
            row = (*row[:_DETAILS], None, *row[_DETAILS + 1 :])
        yield (*row[: len(audit.HASHED_FIELDS)], digest, *row[len(audit.HASHED_FIELDS) :])


class _Echo:
    def write(self, value: str) -> str:
        return value


@require_GET
def audit_export(request: HttpRequest, fmt: str) -> HttpResponse | StreamingHttpResponse:
    """The filtered selection as CSV or JSON lines, streamed; the export is audited.

    The selection is fixed at the entries that existed when the export began (``seq`` up
    to the head then), so the file can be reproduced from the filters and that bound.
    """
    filterset = _audit_filterset(request)
    if not filterset.is_valid():
        # Said in words: an export refused without a reason reads as an empty log.
        refused = [_("A filter is not valid, so nothing is exported:")]
        for name, messages in filterset.errors.items():
            label = filterset.form[name].label if name in filterset.form.fields else name
            refused += [f"{label}: {message}" for message in messages]
        return HttpResponse(
            "\n".join(map(str, refused)) + "\n",
            content_type="text/plain; charset=utf-8",
            status=400,
        )
    filters_used = {k: v for k, v in request.GET.items() if v}
    head = _head_seq()
    audit.record(request.user, "audit.export", format=fmt, filters=filters_used, up_to_seq=head)
    readable = reads.readable_case_ids(request.user)
    rows = _export_rows(
        filterset.qs.filter(seq__lte=head)
        .order_by("seq")
        .values_list(*_STORED_FIELDS)
        .iterator(chunk_size=2000),
        readable,
    )
    if fmt == "csv":
        writer = csv.writer(_Echo())
        lines = (
            writer.writerow(r)
            for r in chain([EXPORT_FIELDS], ([csv_cell(v) for v in row] for row in rows))
        )
        content_type = "text/csv; charset=utf-8"
    else:
        lines = (
            json.dumps(
                {
                    k: (v.isoformat(timespec="microseconds") if isinstance(v, datetime) else v)
                    for k, v in zip(EXPORT_FIELDS, row, strict=True)
                },
                sort_keys=True,
                ensure_ascii=False,
            )
            + "\n"
            for row in rows
        )
        content_type = "application/x-ndjson; charset=utf-8"
    response = StreamingHttpResponse(lines, content_type=content_type)
    stamp = timezone.now().strftime("%Y%m%dT%H%M%SZ")
    response["Content-Disposition"] = f'attachment; filename="athar-audit-{stamp}.{fmt}"'
    return response


@require_GET
def case_target_audit(request: HttpRequest, ref: str, target_type: str, target_id: str):
    """Who saw or changed one object of a case: for the case's leads."""
    case = get_case_for_user(request.user, ref, Action.VIEW_CASE_AUDIT)
    entries = (
        reads.audit_entries(request.user)
        .filter(case=case, target_type=target_type, target_id=target_id)
        .order_by("-seq")
    )
    page = TARGET_AUDIT_PAGES.page(entries, request, query="", total=False)
    audit.record(
        request.user,
        "audit.view_target",
        case=case,
        target_type=target_type,
        target_id=target_id,
    )
    label = next((e.target_label for e in page), "")
    return render(
        request,
        "casefiles/case_target_audit.html",
        {
            "case": case,
            "page": page,
            "target_type": target_type,
            "target_id": target_id,
            "label": label,
        },
    )


# How many of each kind of waiting work the admin's home page lists (a link leads to all).
HOME_SHOWN = 10


def _first(queryset) -> tuple[list, bool]:
    """The first ``HOME_SHOWN`` rows, and whether there are more, in one query."""
    rows = list(queryset[: HOME_SHOWN + 1])
    return rows[:HOME_SHOWN], len(rows) > HOME_SHOWN


def _admin_overview(user) -> dict:
    """What waits for a system admin: requests to decide, access about to end, and when
    the log was last signed and the store last re-hashed. No case content. (Apps above
    add theirs, e.g. the resets to decide, as panels: ``panels.py``.)"""
    requests, more_requests = _first(reads.pending_requests(user))
    grants, more_grants = _first(reads.pending_grants(user, admin=True))
    expiring, more_expiring = _first(reads.expiring_memberships(user, EXPIRING_DAYS))
    # The last sweep of the whole store, from its audit entry (a sweep of one case is
    # that case's business).
    sweep = (
        reads.audit_entries(user)
        .filter(action="evidence.fixity", case__isnull=True)
        .order_by("-seq")
        .values("at", "details")
        .first()
    )
    return {
        "requests": requests,
        "more_requests": more_requests,
        "grants": grants,
        "more_grants": more_grants,
        "expiring": expiring,
        "more_expiring": more_expiring,
        "expiring_days": EXPIRING_DAYS,
        "checkpoint": reads.latest_checkpoint(),
        "sweep": sweep,
    }


@require_GET
def home(request: HttpRequest) -> HttpResponse:
    """Members go to their cases; a system admin in no case gets what waits for them."""
    user = request.user
    if not user.is_authenticated:
        return redirect("login")
    if is_system_admin(user) and not reads.has_cases(user):
        return render(request, "casefiles/admin_home.html", _admin_overview(user))
    return redirect("casefiles:case_list")
