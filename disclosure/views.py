"""A case's disclosure packages: the request form, a package's page (its preview, status
and hash), its decision (approve, refuse, withdraw)."""

from __future__ import annotations

import hashlib
import io
from collections.abc import Callable

from django.contrib import messages as flash
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.http import FileResponse, Http404, HttpRequest, HttpResponse, HttpResponseNotAllowed
from django.shortcuts import redirect, render
from django.utils.translation import get_language
from django.utils.translation import gettext as _

from casefiles import audit, once
from casefiles.access import Action, Role, account_of, can, get_case_for_user, role_in
from casefiles.forms import form_errors
from casefiles.models import Case
from evidence import reads as evidence_reads
from people.protection import reveal_refusal

from . import reads, report, services, tasks
from .contents import review
from .forms import ApproveForm, ReasonForm, RequestForm, WithdrawForm
from .models import Package
from .protected import ACQUIRED_FROM, EXIF
from .services.building import bag_report

S = Package.Status


def _request_form(request: HttpRequest, case: Case, data=None) -> RequestForm:
    searches = reads.saved_searches(request.user, case)
    return RequestForm(data, searches=list(searches), language=get_language())


@once.creates
def package_list(request: HttpRequest, ref: str) -> HttpResponse:
    """The case's packages, newest first, and (for who may disclose) the request form."""
    case = get_case_for_user(request.user, ref)
    may_request = can(request.user, Action.EXPORT, case)
    form = None
    status = 200
    if request.method == "POST":
        if not may_request:
            raise PermissionDenied
        form = _request_form(request, case, request.POST)
        if form.is_valid():
            try:
                package = services.request_package(
                    actor=account_of(request), case=case, **form.service_values()
                )
            except ValidationError as exc:
                form_errors(form, exc)
            else:
                return redirect(package.get_absolute_url())
        status = 400
    elif may_request:
        form = _request_form(request, case)
    packages = reads.packages_in(request.user, case).select_related("requested_by")
    values = {"case": case, "packages": packages, "form": form}
    return render(request, "disclosure/package_list.html", values, status=status)


def _package(request: HttpRequest, ref: str, package_id: int) -> tuple[Case, Package]:
    case = get_case_for_user(request.user, ref)
    return case, reads.get_package_for_user(request.user, case, package_id)


def package_detail(request: HttpRequest, ref: str, package_id: int) -> HttpResponse:
    case, package = _package(request, ref, package_id)
    return _detail(request, case, package)


def _detail(
    request: HttpRequest, case: Case, package: Package, status: int = 200, **forms
) -> HttpResponse:
    user = request.user
    lead = role_in(user, case) == Role.LEAD
    deciding = package.status == S.REQUESTED and lead and user.pk != package.requested_by_id
    preview = None  # read as the requester reads: only for those who may export themselves
    flagged: list[dict] = []
    if package.status in (S.REQUESTED, S.APPROVED, S.FAILED) and can(user, Action.EXPORT, case):
        preview = review(package.requested_by, package)
        flagged = _flagged(user, case, package, preview)
    withdrawable = package.status in (S.REQUESTED, S.APPROVED, S.FAILED) and (
        lead or user.pk == package.requested_by_id
    )
    values = {
        "case": case,
        "package": package,
        "preview": preview,
        "deciding": deciding,
        "approve_form": forms.get("approve_form") or ApproveForm(flagged=_keepable(flagged)),
        "flagged": flagged,
        "refuse_form": forms.get("refuse_form") or ReasonForm(),
        "withdraw_form": (forms.get("withdraw_form") or WithdrawForm()) if withdrawable else None,
        "running": package.status == S.BUILDING,
        "buildable": package.status in (S.APPROVED, S.FAILED) and can(user, Action.EXPORT, case),
        "downloadable": package.status == S.READY and can(user, Action.EXPORT, case),
    }
    return render(request, "disclosure/package.html", values, status=status)


def _flagged(user, case: Case, package: Package, preview) -> list[dict]:
    """What the preview says of each whole item's field that names a protected person:
    which field, whom (their code, to whoever may reveal them; else "a protected
    person": the field's text with the code would say who they are), why, and what
    becomes of it."""
    people = reads.people_named({m.person for _l, m in preview.matches})
    kept = package.contents.get("kept_fields", {})
    out = []
    for line, m in preview.matches:
        person = people[m.person]
        may_reveal = can(user, Action.REVEAL_IDENTITY, case)
        if may_reveal and reveal_refusal(user, person, case) is None:
            shown = m.code
        else:
            shown = _("a protected person")
        if m.field == EXIF:
            fate = _("it is inside the file, which goes as it is: keep it, or leave the item out")
        elif m.field == ACQUIRED_FROM and m.field not in kept.get(str(line.pk), {}):
            fate = _("it goes as recorded in the custody chain: keep it, or leave the item out")
        elif m.field in kept.get(str(line.pk), {}):
            fate = _("kept by the approver: %(why)s") % {"why": kept[str(line.pk)][m.field]}
        else:
            fate = _("withheld unless the approver keeps it")
        said = _("%(ref)s: its %(field)s names %(who)s by %(by)s (%(why)s): %(fate)s") % {
            "ref": line.ref,
            "field": m.label,
            "who": shown,
            "by": _("name") if m.by == "name" else _("code"),
            "why": m.why if shown == m.code else _("under protection"),
            "fate": fate,
        }
        out.append({"ref": line.ref, "field": m.field, "said": said, "code": shown})
    return out


def _keepable(flagged: list[dict]) -> list[tuple[str, str, str]]:
    return [(f["ref"], f["field"], f["said"]) for f in flagged]


def _posted(
    step: Callable[[HttpRequest, Case, Package], HttpResponse],
) -> Callable[[HttpRequest, str, int], HttpResponse]:
    def view(request: HttpRequest, ref: str, package_id: int) -> HttpResponse:
        case, package = _package(request, ref, package_id)  # first: outsiders get 404
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        try:
            return step(request, case, package)
        except ValidationError as exc:  # the step refused (say, nothing may go in)
            flash.error(request, " ".join(exc.messages))
            return _detail(request, case, package, 400)

    return view


def _approve(request: HttpRequest, case: Case, package: Package) -> HttpResponse:
    preview = review(package.requested_by, package)
    flagged = _keepable(_flagged(request.user, case, package, preview))
    form = ApproveForm(request.POST, flagged=flagged)
    if not form.is_valid():
        return _detail(request, case, package, 400, approve_form=form)
    services.approve_package(
        actor=account_of(request),
        package=package,
        allowed_fields=form.cleaned_data["allowed_fields"],
        kept_fields=form.kept_fields(),
    )
    return redirect(package.get_absolute_url())


def _refuse(request: HttpRequest, case: Case, package: Package) -> HttpResponse:
    form = ReasonForm(request.POST)
    if not form.is_valid():
        return _detail(request, case, package, 400, refuse_form=form)
    services.refuse_package(
        actor=account_of(request), package=package, reason=form.cleaned_data["reason"]
    )
    return redirect(package.get_absolute_url())


def _withdraw(request: HttpRequest, case: Case, package: Package) -> HttpResponse:
    form = WithdrawForm(request.POST)
    if not form.is_valid():
        return _detail(request, case, package, 400, withdraw_form=form)
    services.withdraw_package(
        actor=account_of(request), package=package, reason=form.cleaned_data["reason"]
    )
    return redirect(package.get_absolute_url())


def _build(request: HttpRequest, case: Case, package: Package) -> HttpResponse:
    """Start the build: the task worker carries it out while the page shows progress."""
    started = services.start_build(actor=account_of(request), package=package)
    transaction.on_commit(lambda: tasks.build_package.enqueue(started.pk))
    return redirect(package.get_absolute_url())


def download(request: HttpRequest, ref: str, package_id: int) -> FileResponse:
    """The stored tar file of a ready package, the same bytes every time (audited)."""
    case, package = _package(request, ref, package_id)
    if not can(request.user, Action.EXPORT, case):
        raise PermissionDenied
    if package.status != S.READY or not package.stored_path.is_file():
        raise Http404
    with transaction.atomic(durable=True):
        audit.record(
            request.user, "disclosure.download", target=package, case=case, sha256=package.sha256
        )
    response = FileResponse(
        package.stored_path.open("rb"), as_attachment=True, filename=f"{package.code}.tar"
    )
    response["Content-Type"] = "application/x-tar"
    return response


def package_report(request: HttpRequest, ref: str, package_id: int) -> FileResponse:
    """A ready package's custody report (PDF), the one its bag holds (covered by the
    signature), issued from the stored tar file byte for byte (audited)."""
    case, package = _package(request, ref, package_id)
    if not can(request.user, Action.EXPORT, case):
        raise PermissionDenied
    if package.status != S.READY or not package.stored_path.is_file():
        raise Http404
    pdf = bag_report(package)
    with transaction.atomic(durable=True):
        audit.record(
            request.user,
            "disclosure.report",
            target=package,
            case=case,
            sha256=hashlib.sha256(pdf).hexdigest(),
        )
    response = FileResponse(io.BytesIO(pdf), filename=f"{package.code}-custody-report.pdf")
    response["Content-Type"] = "application/pdf"
    return response


def item_report(request: HttpRequest, ref: str, item_ref: str) -> HttpResponse:
    """One item's custody report (PDF), for whoever may read the item (audited)."""
    case = get_case_for_user(request.user, ref)
    item = evidence_reads.get_readable_item(request.user, case, item_ref)
    pdf = report.item_report(item)
    with transaction.atomic(durable=True):
        audit.record(request.user, "disclosure.item_report", target=item, case=case)
    response = HttpResponse(pdf, content_type="application/pdf")
    response["Content-Disposition"] = f'inline; filename="{item.reference}-custody-report.pdf"'
    return response


approve = _posted(_approve)
build = _posted(_build)
refuse = _posted(_refuse)
withdraw = _posted(_withdraw)
