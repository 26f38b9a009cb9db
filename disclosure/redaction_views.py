"""An item's redacted copies: the form that draws one (rectangles typed in the picture's
pixels) and each copy's picture, for the members who may read the item."""

from __future__ import annotations

from django import forms
from django.core.exceptions import ValidationError
from django.db import transaction
from django.http import FileResponse, Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext_lazy as _

from casefiles import audit, once
from casefiles.access import Action, account_of, can, get_case_for_user
from casefiles.models import Case
from evidence import reads as evidence_reads
from evidence.graphic import shows_real_preview
from evidence.models import EvidenceItem
from evidence.storage import evidence_storage

from . import reads, services


class RedactionForm(forms.Form):
    regions = forms.CharField(
        label=_("Rectangles: left, top, width, height in pixels, one a line"),
        max_length=2000,
        widget=forms.Textarea({"rows": 4, "dir": "ltr"}),
    )
    reason = forms.CharField(
        label=_("Reason"), max_length=2000, widget=forms.Textarea({"rows": 2, "dir": "auto"})
    )


def _item(request: HttpRequest, ref: str, item_ref: str) -> tuple[Case, EvidenceItem]:
    case = get_case_for_user(request.user, ref)
    return case, evidence_reads.get_readable_item(
        request.user, case, item_ref, "original", "provenance"
    )


@once.creates
def redact(request: HttpRequest, ref: str, item_ref: str) -> HttpResponse:
    case, item = _item(request, ref, item_ref)
    may_draw = can(request.user, Action.ADD_EVIDENCE, case)
    form = RedactionForm(request.POST if request.method == "POST" else None)
    status = 200
    if request.method == "POST":
        if not may_draw:
            return HttpResponse(status=403)
        if form.is_valid():
            try:
                regions = services.parse_regions(form.cleaned_data["regions"])
                services.redact_item(
                    actor=account_of(request),
                    item=item,
                    regions=regions,
                    reason=form.cleaned_data["reason"],
                )
            except ValidationError as exc:
                if hasattr(exc, "error_dict"):
                    for name, errors in exc.error_dict.items():
                        form.add_error(name if name in form.fields else None, errors)
                else:
                    form.add_error(None, exc)
            else:
                return redirect("disclosure:item_redact", case.reference, item.reference)
        status = 400
    copies = reads.redactions_of(item).select_related("made_by").order_by("-pk")
    provenance = getattr(item, "provenance", None)
    values = {
        "case": case,
        "item": item,
        "form": form if may_draw else None,
        "copies": copies,
        "width": provenance.width if provenance else None,
        "height": provenance.height if provenance else None,
        "shown": shows_real_preview(request, item.pk, item.is_graphic),
        "drawable": bool(provenance and provenance.width and provenance.height),
    }
    return render(request, "disclosure/redact.html", values, status=status)


def redaction_image(
    request: HttpRequest, ref: str, item_ref: str, redaction_id: int
) -> FileResponse:
    """A redacted copy's picture (a graphic item's only once revealed on its page)."""
    case, item = _item(request, ref, item_ref)
    copy = get_object_or_404(reads.redactions_of(item), pk=redaction_id)
    if not shows_real_preview(request, item.pk, item.is_graphic):
        raise Http404
    try:
        fh = evidence_storage().open(copy.storage_key)
    except OSError:
        raise Http404 from None  # the row without its file: nothing to show, nothing seen
    try:
        with transaction.atomic(durable=True):
            audit.record(
                request.user,
                "disclosure.redaction_view",
                target=item,
                case=case,
                redaction=copy.pk,
            )
    except BaseException:
        fh.close()
        raise
    # Streamed from storage, not read whole into memory; FileResponse closes the file.
    response = FileResponse(fh, content_type="image/jpeg")
    response["X-Content-Type-Options"] = "nosniff"
    return response
