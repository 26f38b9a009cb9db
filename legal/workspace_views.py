"""The review workspace of a case: its items as a gallery a lawyer filters, pages through
(by reference, from one page to the next: no count of the filtered set), ticks and acts
on in bulk, and the searches kept for it."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseNotAllowed, QueryDict
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import get_language
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET

from casefiles import audit, once
from casefiles.access import ROLE_ACTIONS, account_of, get_case_for_user, is_system_admin
from casefiles.models import Case
from casefiles.paging import Keyset
from evidence import reads as evidence_reads
from evidence.models import EvidenceItem
from evidence.views import thumbnail_url

from . import reads
from .filters import WorkspaceFilter, dropped
from .forms import BulkForm, SavedSearchForm
from .models import LegalElement
from .services import searches
from .services.bulk_actions import ACTIONS

PAGE_SIZE = 48
PAGES = Keyset("reference", size=PAGE_SIZE)


def workspace_url(case: Case, query: str = "") -> str:
    url = reverse("legal:workspace", args=[case.reference])
    return f"{url}?{query}" if query else url


def offered_actions(request: HttpRequest, case: Case) -> list[tuple[str, Any]]:
    """The bulk actions the user may take here (none for a system admin or an observer)."""
    user = account_of(request)
    if is_system_admin(user):
        return []
    allowed = ROLE_ACTIONS.get(getattr(case, "viewer_role", "") or "", frozenset())
    return [(a.name, a.label) for a in ACTIONS.values() if allowed & set(a.may)]


def reviewers_of(case: Case) -> list[tuple[str, str]]:
    """The members who may review now: those a bulk assignment may name."""
    return reads.reviewers_of(case)


def bulk_form(
    request: HttpRequest,
    case: Case,
    data: Any = None,
    *,
    actions: list[tuple[str, Any]] | None = None,
    elements: Callable[[], list[LegalElement]] | None = None,
    **initial: Any,
) -> BulkForm:
    return BulkForm(
        data,
        initial=initial,
        actions=offered_actions(request, case) if actions is None else actions,
        reviewers=reviewers_of(case),
        elements=elements,
        language=get_language(),
        auto_id="bulk-%s",  # the filter form beside it has fields of the same names
    )


def _items(request: HttpRequest, case: Case) -> QuerySet[EvidenceItem]:
    return reads.workspace_items(request.user, case)


def _grades(items: list[EvidenceItem]) -> None:
    """Each item's latest grades of each assessor ("B2"), oldest assessor first: one
    query for the page."""
    shown = [item.pk for item in items if not item.withheld]  # type: ignore[attr-defined]
    latest: dict[int, dict[int, str]] = {}
    rows = reads.grade_rows(shown)
    for item_id, assessor_id, reliability, credibility in rows:
        latest.setdefault(item_id, {})[assessor_id] = f"{reliability}{credibility}"
    for item in items:
        item.grades = list(latest.get(item.pk, {}).values())  # type: ignore[attr-defined]


@require_GET
def workspace(request: HttpRequest, ref: str) -> HttpResponse:
    case = get_case_for_user(request.user, ref)
    catalogue = reads.element_catalogue()

    @functools.cache
    def elements() -> list[LegalElement]:  # one query for both forms, when shown
        return list(catalogue)

    filterset = WorkspaceFilter(
        request.GET, queryset=_items(request, case), case=case, elements=elements
    )
    found = filterset.qs
    if refused := dropped(filterset):
        messages.warning(
            request,
            _("These filters were left out, their values are not valid: %(names)s.")
            % {"names": ", ".join(refused)},
        )
    if filterset.by_content():
        # What is recorded about a file's content must not tell of a withheld item by
        # letting it match: those items are left out of such a search.
        found = found.exclude(withheld=True)
    query = filterset.query()
    page = PAGES.page(found, request, query=query, total=False)
    items: list[EvidenceItem] = page.rows
    _grades(items)
    audit.record(
        request.user,
        "legal.workspace",
        case=case,
        items=[i.reference for i in items if not i.withheld],  # type: ignore[attr-defined]
        withheld=[i.reference for i in items if i.withheld],  # type: ignore[attr-defined]
        filters=query,
    )
    for item in items:
        item.case = case  # its URLs name the case's reference
        if item.has_thumbnail and not item.withheld:  # type: ignore[attr-defined]
            item.thumbnail_url = thumbnail_url(  # type: ignore[attr-defined]
                request.user, case.reference, item.reference, item.pk
            )
    user = account_of(request)
    saved = reads.saved_searches(user, case).select_related("owner")
    offered = offered_actions(request, case)
    return render(
        request,
        "legal/workspace.html",
        {
            "case": case,
            "filter": filterset,
            "page": page,
            "items": items,
            "query": query,
            "filtered": bool(query),
            "filter_refused": bool(refused),
            "saved": saved,
            "user_id": user.pk,
            "save_form": SavedSearchForm(initial={"query": query}),
            "bulk": (
                bulk_form(request, case, actions=offered, elements=elements, query=query)
                if offered
                else None
            ),
        },
    )


@once.creates
def save_search(request: HttpRequest, ref: str) -> HttpResponse:
    case = get_case_for_user(request.user, ref)
    if request.method != "POST":
        return HttpResponseNotAllowed(["POST"])
    form = SavedSearchForm(request.POST)
    if not form.is_valid():
        messages.error(request, _("Give the search a name."))
        return redirect(workspace_url(case))
    # Kept as the filter reads it: a value it refuses is not kept.
    filterset = WorkspaceFilter(
        QueryDict(form.cleaned_data["query"].replace("\x00", "")),
        queryset=evidence_reads.no_items(),
        case=case,
    )
    filterset.is_valid()
    query = filterset.query()
    try:
        searches.save_search(
            actor=account_of(request),
            case=case,
            name=form.cleaned_data["name"],
            query=query,
            shared=form.cleaned_data["shared"],
        )
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
    else:
        messages.success(request, _("Search saved."))
    return redirect(workspace_url(case, query))


def delete_search(request: HttpRequest, ref: str, search_id: int) -> HttpResponse:
    case = get_case_for_user(request.user, ref)
    search = reads.get_saved_search(request.user, case, search_id)
    if request.method != "POST":
        return HttpResponseNotAllowed(["POST"])
    searches.delete_search(actor=account_of(request), search=search)
    messages.success(request, _("Saved search deleted."))
    return redirect(workspace_url(case))
