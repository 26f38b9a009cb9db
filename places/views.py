"""The gazetteer's pages: a list searchable by any name in either script, and a place
with what it sits within and what sits within it. Reference data, shown to any
signed-in user (no case content is here)."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from casefiles.paging import Key, Keyset, list_query

from . import reads
from .filters import PlaceFilter

PLACE_PAGES = Keyset(Key("code"), size=50)


@require_GET
def place_list(request: HttpRequest) -> HttpResponse:
    places = reads.places()
    filterset = PlaceFilter(request.GET, queryset=places)
    valid = filterset.is_valid()
    query = list_query(request)
    page = PLACE_PAGES.page(filterset.qs if valid else places.none(), request, query=query)
    return render(
        request,
        "places/place_list.html",
        {"filter": filterset, "page": page, "filtered": bool(query)},
        status=200 if valid else 400,
    )


@require_GET
def place_detail(request: HttpRequest, code: str) -> HttpResponse:
    # At most four places above a facility: read with it, in one query.
    place = reads.get_place(code)
    return render(
        request,
        "places/place_detail.html",
        {"place": place, "children": place.children.order_by("code")},
    )
