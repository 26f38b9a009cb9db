"""Testimony pages: logging a statement, reading it with the changes between versions,
revising it (its review is a panel of legal; people/views.py holds the people pages)."""

from datetime import datetime

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.db.models import Count
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET

from casefiles import audit, once
from casefiles.access import Action, account_of, can, get_case_for_user
from casefiles.forms import form_errors
from casefiles.paging import Key, Keyset, list_query, number

from . import reads, services
from .filters import TestimonyFilter
from .forms import TestimonyForm, VersionForm
from .models import ConsentScope
from .protection import (
    statement_refusal,
)
from .views import _case_people, _form_page


def _testimony(request, ref, testimony_id, action=Action.VIEW_CASE):
    case = get_case_for_user(request.user, ref, action)
    return case, reads.get_testimony_for_user(request.user, case, testimony_id)


def _when(text: str) -> datetime:
    when = datetime.fromisoformat(text)
    if when.tzinfo is None:
        raise ValueError("a page position names its time zone")
    return when


# Newest first, as on a person's page; the id orders two statements taken at one moment.
TESTIMONY_PAGES = Keyset(Key("-taken_at", _when), Key("pk", number), size=50)


@require_GET
def testimony_list(request: HttpRequest, ref: str) -> HttpResponse:
    """The case's testimonies, filtered, a page at a time: who spoke, when, in what
    language and how, and where its review stands. No statement is shown here."""
    case = get_case_for_user(request.user, ref)
    testimonies = (
        reads.testimonies_listed_for(request.user, case)
        .select_related("witness")
        .annotate(version_count=Count("versions"))
    )
    filterset = TestimonyFilter(request.GET, queryset=testimonies)
    valid = filterset.is_valid()
    query = list_query(request)
    page = TESTIMONY_PAGES.page(filterset.qs if valid else testimonies.none(), request, query=query)
    audit.record(
        request.user,
        "testimony.list",
        case=case,
        testimonies=[t.pk for t in page],
        filters={k: v for k, v in request.GET.items() if v and k not in ("after", "before")},
    )
    return render(
        request,
        "people/testimony_list.html",
        {
            "case": case,
            "filter": filterset,
            "page": page,
            "filtered": bool(query),
            "can_add": can(request.user, Action.ADD_TESTIMONY, case),
        },
        status=200 if valid else 400,
    )


@once.creates
def testimony_create(request: HttpRequest, ref: str) -> HttpResponse:
    case = get_case_for_user(request.user, ref, Action.ADD_TESTIMONY)
    people = _case_people(request.user, case).order_by("code")
    form = TestimonyForm(
        request.POST or None,
        case=case,
        people=people,
        user=account_of(request),
        initial={"witness": request.GET.get("witness", "")},
    )
    if request.method == "POST" and form.is_valid():
        try:
            testimony = services.create_testimony(
                actor=account_of(request), case=case, **form.cleaned_data
            )
        except ValidationError as exc:
            form_errors(form, exc)
        else:
            return redirect(testimony.get_absolute_url())
    return _form_page(
        request,
        case,
        form,
        _("Log a testimony"),
        back=f"/cases/{case.reference}/people/",
        status=400 if form.errors else 200,
    )


def _version_number(value, default):
    try:
        return int(value)
    except (TypeError, ValueError):
        return default


def _testimony_page(request, case, testimony, status=200):
    """The testimony page. Its statement, changes, version reasons and review comments
    only for who may read the statement (``statement_refusal``); every view is audited,
    naming the version read or that the statement was withheld."""
    refusal = statement_refusal(request.user, testimony.witness, case)
    versions = list(testimony.versions.select_related("author").order_by("number"))
    by_number = {v.number: v for v in versions}
    last = versions[-1].number
    new = by_number.get(_version_number(request.GET.get("b"), last), versions[-1])
    old = by_number.get(_version_number(request.GET.get("a"), new.number - 1))
    if refusal:
        new, old = versions[-1], None
        reads.record_statement_withheld(request.user, testimony)
    else:
        audit.record(
            request.user, "testimony.view", target=testimony, case=case, version=new.number
        )
    purposes = [p for p in ConsentScope.values if p != ConsentScope.SHARING]
    answers = services.sharing_answers(testimony=testimony, purposes=purposes)
    consent = {str(ConsentScope(p).label): answers[p] for p in purposes}
    return render(
        request,
        "people/testimony_detail.html",
        {
            "case": case,
            "testimony": testimony,
            "versions": versions,
            "shown": new,
            "compared": old,
            "statement_refusal": refusal,
            "diff": services.diff_versions(old, new) if old else None,
            "can_revise": (
                not refusal and testimony.editable and can(request.user, Action.ADD_TESTIMONY, case)
            ),
            "consent": consent,
        },
        status=status,
    )


def testimony_detail(request: HttpRequest, ref: str, testimony_id: int) -> HttpResponse:
    case, testimony = _testimony(request, ref, testimony_id)
    return _testimony_page(request, case, testimony)


@once.creates
def version_create(request: HttpRequest, ref: str, testimony_id: int) -> HttpResponse:
    """The form for a new version, filled with the statement as it stands: a read of the
    statement, kept to who may read it and audited as one."""
    case, testimony = _testimony(request, ref, testimony_id, Action.ADD_TESTIMONY)
    if statement_refusal(request.user, testimony.witness, case):
        return _testimony_page(request, case, testimony, status=403)
    closed = _(
        "This testimony is %(status)s: only a new, returned or approved testimony takes a "
        "new version."
    ) % {"status": testimony.get_status_display().lower()}
    if request.method != "POST":
        if not testimony.editable:
            # An old link or a second tab: say why, never show the form.
            messages.error(request, closed)
            return redirect(testimony.get_absolute_url())
        head = testimony.versions.order_by("-number").first()
        audit.record(
            request.user,
            "testimony.view",
            target=testimony,
            case=case,
            version=head.number,
            for_revision=True,
        )
        form = VersionForm(initial={"text": head.text})
        status = 200
    else:
        form = VersionForm(request.POST)
        status = 400
        if not testimony.editable:
            # Submitted meanwhile: keep what was typed, and say why it was not saved.
            form.full_clean()  # an unchecked form cannot take an error
            form.add_error(None, closed)
            status = 409
        elif form.is_valid():
            try:
                services.revise_testimony(
                    actor=account_of(request), testimony=testimony, **form.cleaned_data
                )
            except ValidationError as exc:
                form_errors(form, exc)
            else:
                return redirect(testimony.get_absolute_url())
    return _form_page(
        request,
        case,
        form,
        _("New version of %s") % testimony,
        back=testimony.get_absolute_url(),
        intro=_("Earlier versions are kept as they are; say why the statement changes."),
        status=status,
    )
