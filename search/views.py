"""``/search/``: one box over everything the signed-in user may read.

The box posts its words; the page answers with a 303 to ``?r=<token>`` and shows the
results there (``search.kept``), so a searched name is in no URL, log line or
``Referer`` (decision 0024)."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods

from casefiles.access import account_of

from . import kept, reads
from .forms import SearchForm
from .reads import Results, search


@require_http_methods(["GET", "POST"])
def search_page(request: HttpRequest) -> HttpResponse:
    """POST: keep the words and see other (303) to ``?r=``. GET ``?r=``: the results,
    grouped by kind, each only if the access policy lets this user see it; each showing
    is audited by a keyed digest of its words (``search.query``). A ``q`` in the URL is
    never searched (it is in logs and history already): it is dropped by a redirect to
    the empty box, which says why."""
    if "q" in request.GET and request.method == "GET":
        messages.info(
            request,
            _(
                "Words in the page's address are not searched (browsers and servers keep "
                "addresses): type them in the box."
            ),
        )
        return redirect("search:search")
    user = account_of(request)
    cases = reads.cases_to_search(user)
    choices = [(ref, f"{ref} · {c.title}") for ref, c in cases.items()]
    notice = ""
    if request.method == "POST":
        form = SearchForm(request.POST, cases=choices)
        if form.is_valid() and form.cleaned_data["q"].strip():
            token = kept.keep(request, kept.Asked(**form.cleaned_data))
            response = HttpResponseRedirect(f"{reverse('search:search')}?r={token}")
            response.status_code = 303
            return response
    elif "r" in request.GET:
        asked = kept.recall(request, request.GET["r"])
        form = SearchForm(asked.as_data() if asked else None, cases=choices)
        if asked is None:
            notice = _(
                "This search is no longer kept (a search is kept for %(minutes)d minutes, "
                "in the session it was made in): search again."
            ) % {"minutes": kept.KEEP_SECONDS // 60}
    else:
        form = SearchForm(None, cases=choices)
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
        {"form": form, "results": results or Results("", []), "notice": notice},
        status=status,
    )
