"""What a lawyer does from an item's or a testimony's page (its panels post here): a
review step, a link to a legal element and its confirmation, an assessment."""

from __future__ import annotations

from collections.abc import Callable

from django import forms
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse, HttpResponseNotAllowed
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import get_language, gettext_noop
from django.utils.translation import gettext as _

from casefiles import once
from casefiles.access import account_of, get_case_for_user
from casefiles.forms import form_errors
from casefiles.models import Case
from evidence.models import EvidenceItem
from people import reads as people_reads
from people.models import Testimony

from . import reads
from .forms import AssessmentForm, CommentForm, DecisionForm, LinkForm, NoteForm, ReasonForm
from .models import ElementLink
from .services import assessments, comments, links, review
from .services.common import Reviewed


def the_item(request: HttpRequest, ref: str, item_ref: str) -> tuple[Case, EvidenceItem]:
    case = get_case_for_user(request.user, ref)
    return case, reads.item_for_step(request.user, case, item_ref)


def the_testimony(request: HttpRequest, ref: str, testimony_id: int) -> tuple[Case, Testimony]:
    case = get_case_for_user(request.user, ref)
    return case, people_reads.get_testimony_for_user(request.user, case, testimony_id)


def posted(view: Callable[[HttpRequest, Case, Reviewed], HttpResponse], *, creates=False):
    """Two URLs for one step, on an item or on a testimony; POST only. ``creates``: the
    step adds a record (a comment, a link, an assessment), so one form's POST counts
    once (casefiles/once.py); a review step moves a status, which a repeat cannot."""

    def on_item(request: HttpRequest, ref: str, item_ref: str) -> HttpResponse:
        found = the_item(request, ref, item_ref)  # first: outsiders learn nothing (404)
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        return view(request, *found)

    def on_testimony(request: HttpRequest, ref: str, testimony_id: int) -> HttpResponse:
        found = the_testimony(request, ref, testimony_id)
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        return view(request, *found)

    if creates:
        return once.creates(on_item), once.creates(on_testimony)
    return on_item, on_testimony


def refused_form(
    request: HttpRequest, case: Case, record: Reviewed, form: forms.BaseForm, title: str
) -> HttpResponse:
    """The form again, with what was typed and why it was not saved."""
    values = {"case": case, "record": record, "form": form, "title": title}
    return render(request, "legal/record_form.html", values, status=400)


def _decide(request: HttpRequest, case: Case, record: Reviewed) -> HttpResponse:
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
            form_errors(form, exc)
        else:
            return redirect(f"{record.get_absolute_url()}#review")
    elif "to_status" in form.errors:
        form.add_error(None, review.refusal_of_choice(source, request.POST.get("to_status", "")))
    return refused_form(request, case, record, form, _("Review of %s") % record)


def _written(
    service: Callable[..., object],
    make_form: Callable[..., forms.BaseForm],
    anchor: str,
    title: str,
) -> Callable[[HttpRequest, Case, Reviewed], HttpResponse]:
    """A step that writes one thing about a record through ``service``: back to the
    record's ``#anchor`` when written, else the form again with what was typed and why."""

    def view(request: HttpRequest, case: Case, record: Reviewed) -> HttpResponse:
        form = make_form(request.POST)
        if form.is_valid():
            try:
                actor = account_of(request)
                service(actor=actor, case=case, record=record, **form.cleaned_data)
            except ValidationError as exc:
                form_errors(form, exc)
            else:
                return redirect(f"{record.get_absolute_url()}#{anchor}")
        return refused_form(request, case, record, form, _(title) % record)

    return view


_link = _written(
    links.link_to_element,
    lambda data: LinkForm(data, language=get_language()),
    "elements",
    gettext_noop("Link %s to a legal element"),
)
_assess = _written(
    assessments.assess, AssessmentForm, "assessments", gettext_noop("Assessment of %s")
)
_comment = _written(comments.add_comment, CommentForm, "comments", gettext_noop("Comment on %s"))


item_review, testimony_review = posted(_decide)
item_comment, testimony_comment = posted(_comment, creates=True)
item_link, testimony_link = posted(_link, creates=True)
item_assess, testimony_assess = posted(_assess, creates=True)


def _the_link(request: HttpRequest, ref: str, link_id: int) -> tuple[Case, ElementLink]:
    case = get_case_for_user(request.user, ref)
    return case, reads.get_link_for_user(request.user, case, link_id)


def link_confirm(request: HttpRequest, ref: str, link_id: int) -> HttpResponse:
    case, link = _the_link(request, ref, link_id)
    if request.method != "POST":
        return HttpResponseNotAllowed(["POST"])
    form = NoteForm(request.POST)
    if form.is_valid():
        try:
            links.confirm_link(actor=account_of(request), link=link, **form.cleaned_data)
        except ValidationError as exc:
            form_errors(form, exc)
        else:
            return redirect(_back(request, link))
    return refused_form(
        request, case, link.record, form, _("Confirm the link to %s") % link.element
    )


def link_withdraw(request: HttpRequest, ref: str, link_id: int) -> HttpResponse:
    case, link = _the_link(request, ref, link_id)
    if request.method != "POST":
        return HttpResponseNotAllowed(["POST"])
    form = ReasonForm(request.POST)
    if form.is_valid():
        try:
            links.withdraw_link(actor=account_of(request), link=link, **form.cleaned_data)
        except ValidationError as exc:
            form_errors(form, exc)
        else:
            return redirect(_back(request, link))
    return refused_form(
        request, case, link.record, form, _("Withdraw the link to %s") % link.element
    )


def _back(request: HttpRequest, link: ElementLink) -> str:
    """Back where the form was: the element's page or the record's (never elsewhere)."""
    if request.POST.get("back") == "element":
        return reverse("legal:element_links", args=[link.case.reference, link.element.code])
    return f"{link.record.get_absolute_url()}#elements"
