"""Incident pages: the case's list (filters, keyset pages), an incident with its acts,
links and versions, and the forms that change it. Every read goes through
``visible_to``; an outsider gets 404 from ``get_case_for_user``."""

from __future__ import annotations

import re

from django.core.exceptions import ValidationError
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseNotAllowed
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import get_language_bidi
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET

from casefiles import audit, once
from casefiles.access import Action, account_of, can, get_case_for_user
from casefiles.forms import form_errors
from casefiles.models import Case
from casefiles.paging import Key, Keyset, list_query
from evidence.models import EvidenceItem
from legal.models import LegalElement
from people.models import Testimony

from . import casemap, reads, timeline
from .filters import IncidentFilter
from .forms import ActForm, IncidentForm, LinkForm, PerpetratorForm, TimelineForm
from .services import incidents as services

INCIDENT_PAGES = Keyset(Key("reference"), size=50)
EDITABLE = (
    "title_en",
    "title_ar",
    "description_en",
    "description_ar",
    "precision",
    "starts_on",
    "ends_on",
    "place",
)


def _incident(request: HttpRequest, ref: str, incident_ref: str, action: str = Action.VIEW_CASE):
    case = get_case_for_user(request.user, ref, action)
    return case, reads.get_incident_for_user(request.user, case, incident_ref)


def _people(request: HttpRequest, case: Case):
    """The people of the case, by pseudonym, as a form offers them."""
    return reads.people_offered(request.user, case)


def _form_page(request, case, form, title, back, status=200, incident=None):
    return render(
        request,
        "incidents/form.html",
        {"case": case, "form": form, "title": title, "back": back, "incident": incident},
        status=status,
    )


@require_GET
def incident_list(request: HttpRequest, ref: str) -> HttpResponse:
    case = get_case_for_user(request.user, ref)
    incidents = reads.incidents_in(request.user, case).select_related("place")
    filterset = IncidentFilter(request.GET, queryset=incidents)
    valid = filterset.is_valid()
    query = list_query(request)
    page = INCIDENT_PAGES.page(filterset.qs if valid else incidents.none(), request, query=query)
    audit.record(
        request.user,
        "incident.list",
        case=case,
        incidents=[i.reference for i in page],
        filters={k: v for k, v in request.GET.items() if v and k not in ("after", "before")},
    )
    return render(
        request,
        "incidents/incident_list.html",
        {
            "case": case,
            "filter": filterset,
            "page": page,
            "filtered": bool(query),
            "can_add": can(request.user, Action.ADD_PEOPLE, case),
        },
        status=200 if valid else 400,
    )


def _number(value: str | None) -> int | None:
    return int(value) if value and re.fullmatch(r"[0-9]{1,9}", value) else None


@require_GET
def incident_detail(request: HttpRequest, ref: str, incident_ref: str) -> HttpResponse:
    case, incident = _incident(request, ref, incident_ref)
    acts = reads.acts_shown(request.user, incident)
    links = (
        reads.links_of(request.user, incident)
        .select_related("item", "testimony", "element")
        .order_by("pk")
    )
    versions = list(incident.versions.select_related("author").order_by("-number"))
    wanted = _number(request.GET.get("version"))
    shown = next((v for v in versions if v.number == wanted), None)
    if request.GET.get("version") and shown is None:
        raise Http404
    audit.record(
        request.user,
        "incident.view",
        target=incident,
        case=case,
        version=shown.number if shown else incident.version,
    )
    return render(
        request,
        "incidents/incident_detail.html",
        {
            "case": case,
            "incident": incident,
            "acts": acts,
            "links": links,
            "versions": versions,
            "shown": shown,
            "can_edit": can(request.user, Action.ADD_PEOPLE, case),
        },
    )


@once.creates
def incident_create(request: HttpRequest, ref: str) -> HttpResponse:
    case = get_case_for_user(request.user, ref, Action.ADD_PEOPLE)
    form = IncidentForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        data = {k: form.cleaned_data[k] for k in EDITABLE}
        try:
            incident = services.create_incident(actor=account_of(request), case=case, **data)
        except ValidationError as exc:
            form_errors(form, exc)
        else:
            return redirect(incident.get_absolute_url())
    back = f"/cases/{case.reference}/incidents/"
    status = 400 if form.errors else 200
    return _form_page(request, case, form, _("Record an incident"), back, status)


def incident_edit(request: HttpRequest, ref: str, incident_ref: str) -> HttpResponse:
    case, incident = _incident(request, ref, incident_ref, Action.ADD_PEOPLE)
    initial = {k: getattr(incident, k) for k in EDITABLE}
    initial["expected_version"] = incident.version
    form = IncidentForm(request.POST or None, initial=initial)
    if request.method == "POST" and form.is_valid():
        data = {k: form.cleaned_data[k] for k in EDITABLE}
        try:
            services.update_incident(
                actor=account_of(request),
                incident=incident,
                expected_version=form.cleaned_data["expected_version"],
                **data,
            )
        except ValidationError as exc:
            form_errors(form, exc)
        else:
            return redirect(incident.get_absolute_url())
    title = _("Change %s") % incident.reference
    status = 400 if form.errors else 200
    return _form_page(
        request, case, form, title, incident.get_absolute_url(), status, incident=incident
    )


@once.creates
def act_add(request: HttpRequest, ref: str, incident_ref: str) -> HttpResponse:
    case, incident = _incident(request, ref, incident_ref, Action.ADD_PEOPLE)
    form = ActForm(request.POST or None, people=_people(request, case))
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            services.add_act(actor=account_of(request), incident=incident, **data)
        except ValidationError as exc:
            form_errors(form, exc)
        else:
            return redirect(incident.get_absolute_url())
    title = _("Add an act to %s") % incident.reference
    status = 400 if form.errors else 200
    return _form_page(
        request, case, form, title, incident.get_absolute_url(), status, incident=incident
    )


def _act(request: HttpRequest, ref: str, incident_ref: str, act_id: int):
    case, incident = _incident(request, ref, incident_ref, Action.ADD_PEOPLE)
    return case, incident, reads.get_act_for_user(request.user, incident, act_id)


@once.creates
def perpetrator_add(request: HttpRequest, ref: str, incident_ref: str, act_id: int) -> HttpResponse:
    case, incident, act = _act(request, ref, incident_ref, act_id)
    form = PerpetratorForm(request.POST or None, people=_people(request, case))
    if request.method == "POST" and form.is_valid():
        try:
            services.add_perpetrator(actor=account_of(request), act=act, **form.cleaned_data)
        except ValidationError as exc:
            form_errors(form, exc)
        else:
            return redirect(incident.get_absolute_url())
    title = _("Add a perpetrator to an act of %s") % incident.reference
    status = 400 if form.errors else 200
    return _form_page(
        request, case, form, title, incident.get_absolute_url(), status, incident=incident
    )


def act_remove(request: HttpRequest, ref: str, incident_ref: str, act_id: int) -> HttpResponse:
    _, incident, act = _act(request, ref, incident_ref, act_id)
    if request.method != "POST":
        return HttpResponseNotAllowed(["POST"])
    services.remove_act(actor=account_of(request), act=act)
    return redirect(incident.get_absolute_url())


def _record(request: HttpRequest, case: Case, text: str) -> EvidenceItem | Testimony | LegalElement:
    """The record a link names: a testimony (T-0001), a legal element's code, or an
    evidence item's reference; ValidationError for none of the case's."""
    text = text.strip()
    m = re.fullmatch(r"[Tt]-?0*([0-9]{1,9})", text)
    record = reads.record_named(request.user, case, testimony=int(m[1]) if m else None, text=text)
    if record is not None:
        return record
    raise ValidationError(
        {"record": _("No item, testimony or legal element of this case is %s.") % text}
    )


@once.creates
def link_add(request: HttpRequest, ref: str, incident_ref: str) -> HttpResponse:
    case, incident = _incident(request, ref, incident_ref, Action.ADD_PEOPLE)
    form = LinkForm(request.POST or None, initial={"record": request.GET.get("record", "")})
    if request.method == "POST" and form.is_valid():
        try:
            record = _record(request, case, form.cleaned_data["record"])
            services.link_record(actor=account_of(request), incident=incident, record=record)
        except ValidationError as exc:
            form_errors(form, exc)
        else:
            return redirect(incident.get_absolute_url())
    title = _("Link a record to %s") % incident.reference
    status = 400 if form.errors else 200
    return _form_page(
        request, case, form, title, incident.get_absolute_url(), status, incident=incident
    )


def link_remove(
    request: HttpRequest, ref: str, incident_ref: str, incident_link_id: int
) -> HttpResponse:
    _, incident = _incident(request, ref, incident_ref, Action.ADD_PEOPLE)
    link = get_object_or_404(reads.links_of(request.user, incident), pk=incident_link_id)
    link.incident = incident
    if request.method != "POST":
        return HttpResponseNotAllowed(["POST"])
    services.unlink_record(actor=account_of(request), link=link)
    return redirect(incident.get_absolute_url())


@require_GET
def case_timeline(request: HttpRequest, ref: str) -> HttpResponse:
    """The case's timeline (``incidents/timeline.py``): audited, as a list of what it
    shows."""
    case = get_case_for_user(request.user, ref)
    form = TimelineForm(request.GET or None)
    valid = form.is_valid() if form.is_bound else True
    data = form.cleaned_data if form.is_bound and valid else {}
    kinds = set(data.get("kinds") or timeline.KINDS)
    person = (data.get("person") or "").strip()
    marks = timeline.marks_of(request.user, case, kinds, data.get("place"), person) if valid else []
    audit.record(
        request.user,
        "incident.timeline",
        case=case,
        marks=len(marks),
        filters={k: v for k, v in request.GET.lists() if any(v)},
    )
    rtl = get_language_bidi()
    return render(
        request,
        "incidents/timeline.html",
        {
            "case": case,
            "form": form,
            "svg": timeline.draw(marks, case, rtl=rtl),
            "count": len(marks),
        },
        status=200 if valid else 400,
    )


@require_GET
def case_map(request: HttpRequest, ref: str) -> HttpResponse:
    """The case's map (``incidents/casemap.py``): audited, as a count of what it shows."""
    case = get_case_for_user(request.user, ref)
    marks = casemap.marks_of(request.user, case)
    audit.record(request.user, "incident.map", case=case, marks=len(marks))
    rtl = get_language_bidi()
    return render(
        request,
        "incidents/map.html",
        {
            "case": case,
            "svg": casemap.draw(marks, rtl=rtl),
            "incidents": sum(m.kind == "incident" for m in marks),
            "photos": sum(m.count for m in marks if m.kind == "town"),
        },
    )
