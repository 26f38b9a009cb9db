"""Bulk actions from the review workspace: the confirmation that says how many items will
change (and which will be skipped, and why), then the job, run here when small or by the
task worker with a progress page (``legal/services/bulk.py``)."""

from __future__ import annotations

from django import forms
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.http import HttpRequest, HttpResponse, HttpResponseNotAllowed
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _

from casefiles import once
from casefiles.access import account_of, get_case_for_user
from casefiles.models import Case

from . import reads, tasks
from .forms import BulkForm
from .models import BulkJob
from .services import bulk
from .services.bulk_actions import ACTIONS, reason_label
from .workspace_views import bulk_form, workspace_url


def _selection(request: HttpRequest, form: BulkForm) -> list[int] | None:
    """The items ticked, or None for everything the filter matches."""
    if form.cleaned_data["scope"] == BulkForm.ALL:
        return None
    picked = request.POST.getlist("item")
    if not picked:
        raise ValidationError(
            _("Tick the items to change, or choose everything the filter matches.")
        )
    if len(picked) > bulk.MAX_SELECTION or not all(
        p.isascii() and p.isdigit() and len(p) < 19 for p in picked
    ):
        raise ValidationError(_("Choose fewer items, or act on everything the filter matches."))
    return sorted({int(p) for p in picked})


def _shown(form: BulkForm) -> list[tuple[str, str]]:
    """The action's values as the form offered them, for the confirmation to repeat."""
    shown = []
    for name in form.values():
        field, value = form.fields[name], form.cleaned_data.get(name)
        if isinstance(field, forms.ChoiceField):
            value = dict(field.choices).get(value, value)  # type: ignore[arg-type]
        shown.append((str(field.label), str(value or "—")))
    return shown


def _through(request: HttpRequest, case: Case) -> int:
    """The newest item the confirmation counted: none taken in since joins the job."""
    given = request.POST.get("through", "")
    return (
        int(given)
        if given.isascii() and given.isdigit() and len(given) < 19
        else bulk.newest_item(case)
    )


@once.creates
def bulk_action(request: HttpRequest, ref: str) -> HttpResponse:
    """POST without ``confirm``: the confirmation page. With it: the job."""
    case = get_case_for_user(request.user, ref)
    if request.method != "POST":
        return HttpResponseNotAllowed(["POST"])
    actor = account_of(request)
    form = bulk_form(request, case, request.POST)
    if not form.is_valid():
        if "action" in form.errors and request.POST.get("action") in ACTIONS:
            raise PermissionDenied  # an action the user's role does not offer
        return _refused(request, case, form)
    name = form.cleaned_data["action"]
    query = form.cleaned_data["query"]
    try:
        selection = _selection(request, form)
        values = form.values()
        resolved = bulk.check(actor, case, name, values)
        through = _through(request, case)
        if "confirm" not in request.POST:
            items = bulk.targets(actor, case, query=query, selection=selection, through=through)
            preview = bulk.preview(actor, case, name, resolved, items)
            return render(
                request,
                "legal/bulk_confirm.html",
                {
                    "case": case,
                    "form": form,
                    "action": ACTIONS[name],
                    "shown": _shown(form),
                    "preview": preview,
                    "skipped": [(reason_label(r), n) for r, n in sorted(preview.skipped.items())],
                    "selection": selection,
                    "through": through,
                    "as_task": preview.total > bulk.INLINE_LIMIT,
                    "back": workspace_url(case, query),
                },
            )
        job = bulk.start_bulk(
            actor=actor,
            case=case,
            action=name,
            values=values,
            query=query,
            selection=selection,
            through=through,
        )
    except ValidationError as exc:
        form.add_error(None, exc.messages)
        return _refused(request, case, form)
    if bulk.runs_inline(job):
        bulk.run_bulk(job)
    else:
        transaction.on_commit(lambda: tasks.run_bulk_job.enqueue(job.pk))
    return redirect("legal:bulk_job", case.reference, job.pk)


def _refused(request: HttpRequest, case: Case, form: BulkForm) -> HttpResponse:
    """Nothing changed, and why: the form again with what was chosen and typed, and the
    items ticked (those that read as item ids), to correct and continue."""
    back = workspace_url(case, request.POST.get("query", "").replace("\x00", ""))
    picked = [
        p for p in request.POST.getlist("item") if p.isascii() and p.isdigit() and len(p) < 19
    ][: bulk.MAX_SELECTION]
    values = {"case": case, "bulk": form, "picked": picked, "back": back}
    return render(request, "legal/bulk_refused.html", values, status=400)


def bulk_job(request: HttpRequest, ref: str, job_id: int) -> HttpResponse:
    """A bulk job's progress while it runs, and what it did: items changed, skipped and
    why. Any member of the case may read it, as they may read the items."""
    case = get_case_for_user(request.user, ref)
    job = reads.get_bulk_job(request.user, case, job_id)
    running = job.status in (BulkJob.Status.PENDING, BulkJob.Status.RUNNING)
    return render(
        request,
        "legal/bulk_job.html",
        {
            "case": case,
            "job": job,
            "action": ACTIONS.get(job.action),
            "running": running,
            "skipped": [(reason_label(r), n) for r, n in sorted(job.skipped.items())],
            "back": workspace_url(case, job.query),
        },
    )
