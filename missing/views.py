"""The missing: a case's missing people, a victim's antemortem profile (revealed on
request, audited), its status and history, and family identification sessions, which
only the case lead runs. An outsider gets 404 from ``get_case_for_user``; a member the
rule refuses gets 403; bad input gets the form again with what was typed."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from django.contrib import messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseNotAllowed
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET

from casefiles import audit, once
from casefiles.access import account_of, get_case_for_user
from casefiles.forms import form_errors
from casefiles.paging import Key, Keyset, number
from evidence import graphic
from evidence.views import thumbnail_url
from people.services import SealedValueBroken

from . import reads
from .forms import IdentifyForm, ProfileForm, SessionForm, StatusForm
from .models import Antemortem, Candidate, Session
from .services import missing as services

# A session's photos, in the order they were prepared (1, 2, 3, … with no gap), a page
# at a time: the page of a photo follows from its number (``_page_of``).
CANDIDATE_PAGES = Keyset(Key("order", number), size=24)


def _seal_broken_message() -> str:
    return _(
        "Integrity warning: a sealed field of this antemortem profile failed its integrity "
        "check (a stored value does not open for this profile: it was moved or altered in "
        "the database). Nothing was shown. Report it to the admins; the audit log names "
        "the table, row and column."
    )


def _person(request: HttpRequest, ref: str, code: str):
    case = get_case_for_user(request.user, ref)
    return case, reads.get_person_for_user(request.user, case, code)


def _profile(request: HttpRequest, ref: str, code: str):
    case, person = _person(request, ref, code)
    return case, person, reads.profile_of(request.user, case, person)


@require_GET
def missing_list(request: HttpRequest, ref: str) -> HttpResponse:
    case = get_case_for_user(request.user, ref)
    profiles = reads.profiles_in(request.user, case)
    without = reads.victims_without_profile(request.user, case)
    audit.record(request.user, "missing.list", case=case, people=[p.person.code for p in profiles])
    return render(
        request, "missing/list.html", {"case": case, "profiles": profiles, "without": without}
    )


def profile_detail(request: HttpRequest, ref: str, code: str) -> HttpResponse:
    """The profile: its status, history and sessions; its protected fields on a POST
    that reveals them (audited), for whoever may reveal the person."""
    if request.method not in ("GET", "POST"):
        return HttpResponseNotAllowed(["GET", "POST"])
    case, person, profile = _profile(request, ref, code)
    actor = account_of(request)
    refusal = services.profile_refusal(actor, case, person)
    revealed: Antemortem | None = None
    seal_broken, status = False, 200
    if request.method == "POST":
        if profile is None:
            raise Http404
        try:
            revealed = services.reveal_profile(actor=actor, case=case, profile=profile)
        except SealedValueBroken:  # refused and audited: the page says so
            seal_broken, status = True, 409
    history = list(profile.history.select_related("changed_by")) if profile else []
    sessions = list(profile.sessions.all()) if profile else []
    return render(
        request,
        "missing/profile.html",
        {
            "case": case,
            "person": person,
            "profile": profile,
            "refusal": refusal,
            "revealed": revealed,
            "seal_broken": _seal_broken_message() if seal_broken else None,
            "history": history,
            "sessions": sessions,
            "status_form": StatusForm(initial={"status": person.victim_status})
            if profile
            else None,
            "is_lead": services.lead_refusal(actor, case) is None,
        },
        status=status,
    )


def profile_edit(request: HttpRequest, ref: str, code: str) -> HttpResponse:
    case, person, profile = _profile(request, ref, code)
    actor = account_of(request)
    if refusal := services.profile_refusal(actor, case, person):
        raise PermissionDenied(refusal)
    if request.method == "POST":
        form = ProfileForm(request.POST)
        if form.is_valid():
            data = form.cleaned_data
            values = Antemortem(**{k: data[k].strip() for k in asdict(Antemortem())})
            try:
                services.save_profile(
                    actor=actor,
                    case=case,
                    person=person,
                    values=values,
                    last_seen_on=data["last_seen_on"],
                    last_seen_place=data["last_seen_place"],
                    facility=data["facility"],
                )
            except ValidationError as exc:
                form_errors(form, exc)
            else:
                messages.success(request, _("Antemortem profile saved."))
                return redirect("missing:profile", case.reference, person.code)
        status = 400
    elif request.method == "GET":
        initial: dict[str, Any] = {}
        if profile is not None:  # to change it one must see it: a reveal, audited
            try:
                opened = services.reveal_profile(actor=actor, case=case, profile=profile)
            except SealedValueBroken:  # refused and audited: nothing to edit from
                messages.error(request, _seal_broken_message())
                return redirect("missing:profile", case.reference, person.code)
            initial = {
                **asdict(opened),
                "last_seen_on": profile.last_seen_on,
                "last_seen_place": profile.last_seen_place_id,
                "facility": profile.facility_id,
            }
        form, status = ProfileForm(initial=initial), 200
    else:
        return HttpResponseNotAllowed(["GET", "POST"])
    return render(
        request,
        "missing/form.html",
        {
            "case": case,
            "person": person,
            "form": form,
            "title": _("Antemortem profile of %(code)s") % {"code": person.code},
            "back": reverse("missing:profile", args=[case.reference, person.code]),
        },
        status=status,
    )


def status_change(request: HttpRequest, ref: str, code: str) -> HttpResponse:
    case, person, profile = _profile(request, ref, code)  # first: to an outsider, none
    if request.method != "POST":
        return HttpResponseNotAllowed(["POST"])
    if profile is None:
        raise Http404
    form = StatusForm(request.POST)
    if not form.is_valid():
        messages.error(request, _("Choose a status from the list."))
    else:
        services.change_status(
            actor=account_of(request),
            case=case,
            profile=profile,
            status=form.cleaned_data["status"],
            reason=form.cleaned_data["reason"],
        )
        messages.success(request, _("Status changed."))
    return redirect("missing:profile", case.reference, person.code)


@once.creates
def session_create(request: HttpRequest, ref: str, code: str) -> HttpResponse:
    case, person, profile = _profile(request, ref, code)
    actor = account_of(request)
    if refusal := services.lead_refusal(actor, case):
        raise PermissionDenied(refusal)
    if profile is None:
        raise Http404
    people = reads.others_in_case(case, person)
    if request.method == "POST":
        form = SessionForm(request.POST, people=people)
        if form.is_valid():
            try:
                session = services.prepare_session(
                    actor=actor, case=case, profile=profile, **form.cleaned_data
                )
            except ValidationError as exc:
                form_errors(form, exc)
            else:
                return redirect("missing:session", case.reference, session.pk)
        status = 400
    elif request.method == "GET":
        form = SessionForm(
            people=people,
            initial={"facility": profile.facility_id, "taken_from": profile.last_seen_on},
        )
        status = 200
    else:
        return HttpResponseNotAllowed(["GET", "POST"])
    return render(
        request,
        "missing/form.html",
        {
            "case": case,
            "person": person,
            "form": form,
            "title": _("Prepare a family identification session for %(code)s")
            % {"code": person.code},
            "back": reverse("missing:profile", args=[case.reference, person.code]),
        },
        status=status,
    )


def _session(request: HttpRequest, ref: str, session_id: int):
    case = get_case_for_user(request.user, ref)
    actor = account_of(request)
    if refusal := services.lead_refusal(actor, case):
        raise PermissionDenied(refusal)
    session = reads.get_session_for_user(request.user, case, session_id)
    return case, actor, session


@require_GET
def session_detail(request: HttpRequest, ref: str, session_id: int) -> HttpResponse:
    case, actor, session = _session(request, ref, session_id)
    return _session_page(request, case, actor, session)


def _identify_form(candidate: Candidate, data: Any = None) -> IdentifyForm:
    """The identify form of one candidate: its own HTML ids (``c<pk>-confidence``), since
    the page shows one form for each photo the family looked at."""
    return IdentifyForm(data, auto_id=f"c{candidate.pk}-%s")


def _page_of(candidate: Candidate) -> str:
    """The cursor of the page that shows ``candidate`` ("" for the first page)."""
    start = (candidate.order - 1) // CANDIDATE_PAGES.size * CANDIDATE_PAGES.size
    return str(start) if start else ""


def _at(case, session, candidate: Candidate) -> str:
    """The session page that shows ``candidate``, scrolled to it."""
    url = reverse("missing:session", args=[case.reference, session.pk])
    cursor = _page_of(candidate)
    return url + (f"?after={cursor}" if cursor else "") + f"#c{candidate.pk}"


def _session_page(request, case, actor, session, failed=None, status=200):
    """The session page, a page of its photos at a time; ``failed`` is (candidate, its
    identify form) when that form came back with errors: shown again, on its photo's
    page, bound to what was typed."""
    page = CANDIDATE_PAGES.page(
        session.candidates.select_related("item", "identification"),
        request,
        # Counted when the session was prepared; an older session's are counted here.
        total=session.matched is None,
        after=_page_of(failed[0]) if failed is not None else None,
    )
    candidates = page.rows
    for candidate in candidates:  # only a photo the family chose to see is sent at all
        candidate.url = (
            thumbnail_url(actor, case.reference, candidate.item.reference, candidate.item_id)
            if candidate.shown_at
            else ""
        )
        candidate.form = (
            failed[1]
            if failed is not None and failed[0].pk == candidate.pk
            else _identify_form(candidate)
        )
        # Who was present is sealed: opened here, for the lead who runs the session.
        candidate.present = candidate.open_present() if candidate.identification_id else ""
    values = {
        "case": case,
        "session": session,
        "candidates": candidates,
        "page": page,
        "last_order": candidates[-1].order if candidates else None,
        "matched": session.matched if session.matched is not None else page.total,
    }
    return render(request, "missing/session.html", values, status=status)


def _candidate(session: Session, candidate_id: int) -> Candidate:
    return get_object_or_404(
        session.candidates.select_related("item", "session__profile"), pk=candidate_id
    )


def candidate_show(request: HttpRequest, ref: str, session_id: int, candidate_id: int):
    case, actor, session = _session(request, ref, session_id)
    candidate = _candidate(session, candidate_id)
    if request.method != "POST":
        return HttpResponseNotAllowed(["POST"])
    services.show_candidate(actor=actor, case=case, candidate=candidate)
    graphic.remember_reveal(request, candidate.item_id)  # the family chose to look
    return redirect(_at(case, session, candidate))


def candidate_identify(request: HttpRequest, ref: str, session_id: int, candidate_id: int):
    case, actor, session = _session(request, ref, session_id)
    candidate = _candidate(session, candidate_id)
    if request.method != "POST":
        return HttpResponseNotAllowed(["POST"])
    form = _identify_form(candidate, request.POST)
    if form.is_valid():
        try:
            services.identify(actor=actor, case=case, candidate=candidate, **form.cleaned_data)
        except ValidationError as exc:
            form_errors(form, exc)
        else:
            messages.success(request, _("Identification recorded; the victim's status follows."))
            return redirect(_at(case, session, candidate))
    return _session_page(request, case, actor, session, (candidate, form), status=400)
