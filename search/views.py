"""``/search/``: one box over everything the signed-in user may read."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from casefiles.access import account_of
from casefiles.models import Case

from .forms import SearchForm
from .query import Results, search


@require_GET
def search_page(request: HttpRequest) -> HttpResponse:
    """Results grouped by kind, each only if the access policy lets this user see it; the
    search is audited by a keyed digest of its words (``search.query``)."""
    user = account_of(request)
    cases = {c.reference: c for c in Case.objects.visible_to(user).order_by("reference")}
    form = SearchForm(
        request.GET or None, cases=[(ref, f"{ref} · {c.title}") for ref, c in cases.items()]
    )
    results = None
    if form.is_bound and form.is_valid() and form.cleaned_data["q"].strip():
        data = form.cleaned_data
        results = search(
            user,
            data["q"],
            case=cases.get(data["case"]),
            kinds=[data["kind"]] if data["kind"] else None,
        )
    status = 400 if form.is_bound and not form.is_valid() else 200
    return render(
        request,
        "search/search.html",
        {"form": form, "results": results or Results("", [])},
        status=status,
    )
