"""Review steps taken from an item's or a testimony's page (their review panel posts here)."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse, HttpResponseNotAllowed
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _

from casefiles.access import account_of, get_case_for_user
from casefiles.models import Case
from evidence.models import EvidenceItem
from people.models import Testimony

from .forms import DecisionForm
from .services import review
from .services.review import Reviewed


def item_review(request: HttpRequest, ref: str, item_ref: str) -> HttpResponse:
    case = get_case_for_user(request.user, ref)
    items = EvidenceItem.objects.visible_to(request.user).filter(case=case)
    item = get_object_or_404(items.select_related("original"), reference=item_ref)
    item.case = case
    return _decide(request, case, item)


def testimony_review(request: HttpRequest, ref: str, testimony_id: int) -> HttpResponse:
    case = get_case_for_user(request.user, ref)
    testimonies = Testimony.objects.visible_to(request.user).filter(case=case)
    testimony = get_object_or_404(testimonies.select_related("witness"), pk=testimony_id)
    testimony.case = case
    return _decide(request, case, testimony)


def _decide(request: HttpRequest, case: Case, record: Reviewed) -> HttpResponse:
    if request.method != "POST":
        return HttpResponseNotAllowed(["POST"])
    actor = account_of(request)
    source = review.status_of(record)
    # Every step the table has from here: a refused one is said in words, not as a
    # missing choice (someone else may have moved it meanwhile).
    targets = [t for (s, t), move in review.TRANSITIONS.items() if s == source and move.offered]
    form = DecisionForm(request.POST, source=source, targets=targets)
    if form.is_valid():
        try:
            review.decide(actor=actor, record=record, **form.cleaned_data)
        except ValidationError as exc:
            if hasattr(exc, "error_dict"):
                for field, errors in exc.error_dict.items():
                    form.add_error(field if field in form.fields else None, errors)
            else:
                form.add_error(None, exc)
        else:
            return redirect(f"{record.get_absolute_url()}#review")
    elif "to_status" in form.errors:
        form.add_error(None, review.refusal_of_choice(source, request.POST.get("to_status", "")))
    return render(
        request,
        "legal/decision_form.html",
        {
            "case": case,
            "record": record,
            "form": form,
            "title": _("Review of %s") % record,
        },
        status=400,
    )
