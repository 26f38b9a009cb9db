from urllib.parse import urlencode

from django.contrib import messages
from django.core import signing
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.db.models import (
    Count,
    Max,
    Q,
)
from django.http import FileResponse, Http404, HttpRequest, HttpResponse
from django.http.response import HttpResponseBase
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_http_methods

from casefiles import audit, once
from casefiles.access import Action, account_of, can, get_case_for_user
from casefiles.forms import form_errors
from casefiles.paging import Keyset, list_query

from . import graphic, reads, services, tasks
from .duplicates import LISTED, duplicates_in, earlier_item
from .filters import EvidenceFilter
from .forms import CustodyEventForm, IdentificationForm, ItemForm, UploadForm
from .intake.pipeline import run_intake
from .intake.staging import (
    PREFIX,
    clear_staging,
    custodian_list_for,
    is_small,
    listing_for,
    stage_custodian_list,
    stage_uploads,
    upload_sha256,
)
from .models import (
    CustodyEvent,
    Derivative,
    EvidenceItem,
    IntakeBatch,
)
from .names import download_name
from .storage import evidence_storage

PAGE_SIZE = 48
# The gallery's order, by reference: unique in a case, so pages follow one another by it.
GALLERY_PAGES = Keyset("reference", size=PAGE_SIZE)
# A thumbnail URL carries a token issued by the audited page that shows it, for that user
# and that item; it goes stale after this long, so links kept in history stop working.
THUMBNAIL_TOKEN_MAX_AGE = 4 * 3600
_THUMBNAIL_SALT = "evidence.thumbnail"


def _thumbnail_signed_value(user, item_pk: int) -> str:
    return f"{user.pk}/{item_pk}"


def thumbnail_url(user, case_ref: str, item_ref: str, item_pk: int) -> str:
    """The thumbnail's URL for ``user``: call it only from a page that audits the item.

    The token is the timestamp and signature of "user/item": the server knows both, so
    the URL names neither.
    """
    signed = signing.TimestampSigner(salt=_THUMBNAIL_SALT).sign(
        _thumbnail_signed_value(user, item_pk)
    )
    token = signed.split(":", 1)[1]
    return f"{reverse('evidence:thumbnail', args=[case_ref, item_ref])}?{urlencode({'t': token})}"


def _thumbnail_token_valid(user, item_pk: int, token: str) -> bool:
    signed = f"{_thumbnail_signed_value(user, item_pk)}:{token}"
    try:
        signing.TimestampSigner(salt=_THUMBNAIL_SALT).unsign(
            signed, max_age=THUMBNAIL_TOKEN_MAX_AGE
        )
    except signing.BadSignature:
        return False
    return True


def _item(request: HttpRequest, ref: str, item_ref: str, action: str = Action.VIEW_CASE):
    return reads.get_item_for_user(request.user, ref, item_ref, action)


def _withheld(request: HttpRequest, case, item, asked: str) -> HttpResponse | None:
    """The refusal page, recorded, when ``item`` belongs to a statement the user may not
    read (``attachment_refusal``); None when they may see it.

    ``asked`` names what was asked for: the item page itself answers 200 (the item
    exists, here is why its content is withheld, as the testimony page does); anything
    that would serve or show its content answers 403.
    """
    refusal = reads.withheld_refusal(request.user, item)
    if refusal is None:
        return None
    reads.record_withheld(request.user, case, item, asked)
    return render(
        request,
        "evidence/item_withheld.html",
        {"case": case, "item": item, "refusal": refusal},
        status=200 if asked == "page" else 403,
    )


@require_GET
def gallery(request: HttpRequest, ref: str) -> HttpResponse:
    case = get_case_for_user(request.user, ref)
    items = (
        reads.listed_for(request.user, case)
        .select_related("case", "original", "provenance")
        .annotate(has_thumbnail=reads.has_thumbnail())
        .order_by("reference")
    )
    filterset = EvidenceFilter(request.GET, queryset=items, case=case, user=account_of(request))
    found = filterset.qs
    if filterset.is_bound and filterset.is_valid() and filterset.by_content():
        # A filter on what the file holds (its date, camera, look) would tell of a
        # withheld item by letting it match: those items are left out of such a search.
        found = found.exclude(withheld=True)
    query = list_query(request)
    page = GALLERY_PAGES.page(found, request, query=query)
    filters_used = {k: v for k, v in request.GET.items() if v and k not in ("after", "before")}
    # Every thumbnail a page shows is a sight of the evidence: one entry names them all,
    # and only the URLs this page gives can fetch them. A withheld item shows only its
    # reference and kind: the entry names it apart.
    audit.record(
        request.user,
        "evidence.gallery",
        case=case,
        items=[item.reference for item in page if not item.withheld],
        withheld=[item.reference for item in page if item.withheld],
        filters=filters_used,
    )
    for item in page:
        if item.has_thumbnail and not item.withheld:
            item.thumbnail_url = thumbnail_url(
                request.user, case.reference, item.reference, item.pk
            )
    return render(
        request,
        "evidence/gallery.html",
        {
            "case": case,
            "filter": filterset,
            "page": page,
            "filtered": bool(query),
            "can_add": can(request.user, Action.ADD_EVIDENCE, case),
        },
    )


# The fixity sweep's own events: "stored", for the purpose the sweep writes.
_FIXITY = Q(
    action=CustodyEvent.Action.STORED,
    purpose__startswith=services.PURPOSE_FIXITY.partition("%")[0],
)


@require_GET
def item_detail(request: HttpRequest, ref: str, item_ref: str) -> HttpResponse:
    case, item = _item(request, ref, item_ref)
    if refused := _withheld(request, case, item, "page"):
        return refused
    # Sweeps that found the original as it was fold into one line; any other result of
    # a sweep stands in the chain as its own event, as loud as it was recorded.
    matched = CustodyEvent.HashResult.MATCH
    custody = (
        item.custody_events.exclude(_FIXITY & Q(hash_result=matched))
        .select_related("actor")
        .order_by("at", "pk")
    )
    fixity = item.custody_events.filter(_FIXITY).aggregate(
        checks=Count("pk"), last=Max("at"), unmatched=Count("pk", filter=~Q(hash_result=matched))
    )
    # What the custodian's own list said of this file, beside the hash taken at intake.
    listed = reads.listed_entry(item)
    near = list(
        reads.listed_for(request.user, case)
        .filter(near_group=item.near_group)
        .exclude(pk=item.pk)
        .order_by("reference")
        .values("pk", "reference", "withheld", "is_graphic")[:24]
        if item.near_group is not None
        else []
    )
    for n in near:
        if not n["withheld"]:
            n["thumbnail_url"] = thumbnail_url(  # a row plus its URL
                request.user, case.reference, n["reference"], n["pk"]
            )
    derivatives = reads.derivative_kinds(item)
    # The items either side, in the gallery's order: keys n and p walk the case.
    in_case = reads.visible_items(request.user, case)
    previous_ref = (
        in_case.filter(reference__lt=item.reference)
        .order_by("-reference")
        .values_list("reference", flat=True)
        .first()
    )
    next_ref = (
        in_case.filter(reference__gt=item.reference)
        .order_by("reference")
        .values_list("reference", flat=True)
        .first()
    )
    # The near-identical items' thumbnails are seen too: the entry names them, as the
    # gallery's names its page.
    audit.record(
        request.user,
        "evidence.view",
        target=item,
        case=case,
        near=[n["reference"] for n in near if not n["withheld"]],
        near_withheld=[n["reference"] for n in near if n["withheld"]],
    )
    return render(
        request,
        "evidence/item_detail.html",
        {
            "case": case,
            "item": item,
            "provenance": getattr(item, "provenance", None),
            "custody": custody,
            "near": near,
            "previous_ref": previous_ref,
            "next_ref": next_ref,
            "has_thumbnail": "thumbnail" in derivatives,
            "previewable": "thumbnail" in derivatives,
            # A graphic item's page warns, and shows no picture, until it is revealed.
            "held_back": not graphic.shows_real_preview(request, item.pk, item.is_graphic),
            "can_mark_graphic": services.may_mark_graphic(account_of(request), case),
            "can_download": can(request.user, Action.DOWNLOAD_ORIGINAL, case),
            "can_edit": can(request.user, Action.ADD_EVIDENCE, case),
            "tags": item.tags.values_list("name", flat=True),
            "identifications": reads.identifications_in(request.user, item),
            "fixity": fixity,
            "listed": listed,
            "same_as": earlier_item(item, request.user),
            "can_record_custody": can(request.user, Action.RECORD_CUSTODY, case),
            "can_identify": can(request.user, Action.ADD_PEOPLE, case),
            "can_view_case_audit": can(request.user, Action.VIEW_CASE_AUDIT, case),
        },
    )


def _open_derivative(derivative: Derivative) -> FileResponse:
    fh = evidence_storage().open(derivative.storage_key)
    return FileResponse(fh, content_type=derivative.media_type)


def _serve_derivative(item: EvidenceItem, kind: str) -> HttpResponseBase:
    derivative = reads.derivative_of(item, kind)
    if derivative is None and kind == Derivative.Kind.PREVIEW:
        derivative = services.ensure_preview(item)
    if derivative is None:
        raise Http404
    try:
        return _open_derivative(derivative)
    except OSError:
        pass  # the row committed but its file is gone (a crash between the two): remake it
    if kind == Derivative.Kind.THUMBNAIL:
        data = services.remake_thumbnail(item, derivative)
        if data is None:
            raise Http404
        return HttpResponse(data, content_type=derivative.media_type)
    if kind == Derivative.Kind.PREVIEW:
        try:
            if services.ensure_preview(item) is not None:
                return _open_derivative(derivative)
        except OSError:
            pass
    raise Http404


def _serve_blurred(item: EvidenceItem) -> HttpResponse:
    """A graphic item's only picture until it is revealed: never the real one instead."""
    data = services.blurred_thumbnail(item)
    if data is None:
        raise Http404
    return HttpResponse(data, content_type="image/jpeg")


@require_GET
def thumbnail(request: HttpRequest, ref: str, item_ref: str) -> HttpResponseBase:
    """Served only with a token from a page that showed (and audited) the item; blurred
    for a graphic item until this user reveals it (``evidence.graphic``)."""
    case, item = _item(request, ref, item_ref)
    if refused := _withheld(request, case, item, "thumbnail"):
        return refused  # a URL given before the statement was withheld from this user
    if not _thumbnail_token_valid(request.user, item.pk, request.GET.get("t", "")):
        raise PermissionDenied  # a member, but no audited page gave this URL
    if not graphic.shows_real_thumbnail(request, item.pk, item.is_graphic):
        return _serve_blurred(item)
    return _serve_derivative(item, Derivative.Kind.THUMBNAIL)


@require_GET
def preview(request: HttpRequest, ref: str, item_ref: str) -> HttpResponseBase:
    """The item's picture at ~1024 px; blurred for a graphic item until revealed."""
    case, item = _item(request, ref, item_ref)
    if refused := _withheld(request, case, item, "preview"):
        return refused
    if not graphic.shows_real_preview(request, item.pk, item.is_graphic):
        response: HttpResponseBase = _serve_blurred(item)
        audit.record(request.user, "evidence.preview", target=item, case=case, blurred=True)
        return response
    response = _serve_derivative(item, Derivative.Kind.PREVIEW)
    audit.record(request.user, "evidence.preview", target=item, case=case)
    return response


@require_GET
def download(request: HttpRequest, ref: str, item_ref: str) -> HttpResponseBase:
    """The original, byte for byte, as an attachment; a custody event and an audit entry."""
    case, item = _item(request, ref, item_ref, Action.DOWNLOAD_ORIGINAL)
    if refused := _withheld(request, case, item, "original"):
        return refused
    fh, result = services.open_verified(item)
    services.record_download(actor=account_of(request), item=item, result=result)
    if fh is None:
        # Recorded loudly above; a changed or missing original is not served, and the
        # member who may see the item is told why rather than given a bare "not found".
        return render(
            request,
            "evidence/download_refused.html",
            {"case": case, "item": item, "changed": result == CustodyEvent.HashResult.MISMATCH},
            status=409 if result == CustodyEvent.HashResult.MISMATCH else 410,
        )
    response = FileResponse(
        fh,  # the very file just verified; FileResponse closes it
        as_attachment=True,
        filename=download_name(item.original_filename, fallback=item.reference),
        content_type="application/octet-stream",
    )
    response["X-Content-Type-Options"] = "nosniff"
    response["Digest"] = f"sha-256={item.original.sha256}"
    return response


@require_http_methods(["GET", "POST"])
def item_edit(request: HttpRequest, ref: str, item_ref: str) -> HttpResponse:
    case, item = _item(request, ref, item_ref, Action.ADD_EVIDENCE)
    if refused := _withheld(request, case, item, "edit"):
        return refused  # the form holds the title and description
    initial = {
        "title": item.title,
        "description": item.description,
        "claimed_date": item.claimed_date,
        "claimed_place": item.claimed_place,
        "tags": ", ".join(item.tags.values_list("name", flat=True)),
        "source_person": item.source_person_id,
        "testimony": item.testimony_id,
    }
    form = ItemForm(request.POST or None, initial=initial, case=case, user=account_of(request))
    if request.method == "POST" and form.is_valid():
        data = dict(form.cleaned_data)
        services.update_item(actor=account_of(request), item=item, tags=data.pop("tags"), **data)
        return redirect(item)
    return render(request, "evidence/item_edit.html", {"case": case, "item": item, "form": form})


@once.creates
@require_http_methods(["GET", "POST"])
def identification_create(request: HttpRequest, ref: str, item_ref: str) -> HttpResponse:
    case, item = _item(request, ref, item_ref, Action.ADD_PEOPLE)
    if refused := _withheld(request, case, item, "identification"):
        return refused  # naming who is in it means having seen it
    form = IdentificationForm(request.POST or None, case=case, user=account_of(request))
    if request.method == "POST" and form.is_valid():
        try:
            services.record_identification(
                actor=account_of(request), item=item, **form.cleaned_data
            )
        except ValidationError as exc:
            form_errors(form, exc)
        else:
            return redirect(item)
    return render(
        request, "evidence/identification_form.html", {"case": case, "item": item, "form": form}
    )


@once.creates
@require_http_methods(["GET", "POST"])
def custody_create(request: HttpRequest, ref: str, item_ref: str) -> HttpResponse:
    """Record a transfer, return, analysis or storage move; the original is re-hashed."""
    case, item = _item(request, ref, item_ref, Action.RECORD_CUSTODY)
    form = CustodyEventForm(request.POST or None, item=item)
    event = None
    if request.method == "POST" and form.is_valid():
        try:
            event = services.record_custody_event(
                actor=account_of(request), item=item, **form.cleaned_data
            )
        except ValidationError as exc:
            form_errors(form, exc)
    if event is not None:
        if event.hash_result == CustodyEvent.HashResult.MATCH:
            messages.success(
                request, _("Recorded. The original was re-hashed and matches its hash.")
            )
        elif event.hash_result == CustodyEvent.HashResult.MISMATCH:
            messages.error(
                request,
                _(
                    "Recorded with HASH MISMATCH: the original no longer matches the hash "
                    "taken at intake. The item is marked changed; see the chain of custody."
                ),
            )
        else:
            messages.error(
                request,
                _(
                    "Recorded with FILE MISSING: the original could not be read from the "
                    "store. The item is marked missing; see the chain of custody."
                ),
            )
        return redirect(f"{item.get_absolute_url()}#custody")
    return render(request, "evidence/custody_form.html", {"case": case, "item": item, "form": form})


@once.creates
@require_http_methods(["GET", "POST"])
def upload(request: HttpRequest, ref: str) -> HttpResponse:
    case = get_case_for_user(request.user, ref, Action.ADD_EVIDENCE)
    form = UploadForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        files = form.cleaned_data["files"]
        # One file or archive handed over: its own hash, as ingest records it.
        source_sha256, source_size = upload_sha256(files[0]) if len(files) == 1 else ("", None)
        try:
            batch = services.create_batch(
                graphic=form.cleaned_data["graphic"],
                actor=account_of(request),
                case=case,
                source_root=f"{PREFIX}{request.user.get_username()}",
                acquired_from=form.cleaned_data["acquired_from"],
                medium=form.cleaned_data["medium"],
                method=form.cleaned_data["method"] or services.METHOD_UPLOADED,
                label=files[0].name if len(files) == 1 else f"{len(files)} files uploaded",
                name_encoding=form.cleaned_data["zip_encoding"],
                source_sha256=source_sha256,
                source_size=source_size,
            )
        except ValidationError as exc:
            form_errors(form, exc)
            return render(request, "evidence/upload.html", {"case": case, "form": form})
        stage_uploads(batch, files)
        listed = form.cleaned_data["custodian_manifest"]
        if listed is not None:
            stage_custodian_list(batch, listed)
        if is_small(files):
            # Taken in now; grouping the new images with the case's near-duplicates waits
            # for a task, however many images the case holds.
            run_intake(
                actor=account_of(request),
                batch=batch,
                listing=listing_for(batch),
                custodian_manifest=custodian_list_for(batch),
                jobs=1,
                group_now=False,
            )
            clear_staging(batch)
            transaction.on_commit(lambda: tasks.group_near_duplicates.enqueue(case.pk))
        else:
            transaction.on_commit(
                lambda: tasks.ingest_staged_batch.enqueue(batch.pk, account_of(request).pk)
            )
        return redirect(batch)
    return render(request, "evidence/upload.html", {"case": case, "form": form})


@require_GET
def batch_detail(request: HttpRequest, ref: str, pk: int) -> HttpResponse:
    case = get_case_for_user(request.user, ref)
    batch = reads.get_batch_for_user(request.user, case, pk)
    running = batch.status in (IntakeBatch.Status.PENDING, IntakeBatch.Status.RUNNING)
    return render(
        request,
        "evidence/batch_detail.html",
        {
            "case": case,
            "batch": batch,
            "running": running,
            "manifest_entries": batch.manifest_entries.exclude(result="match").order_by("path")[
                :200
            ],
            # Each duplicate, and the earlier item it repeats (one query, if any).
            "duplicates": (
                duplicates_in(batch, request.user, limit=LISTED) if batch.duplicate else []
            ),
        },
    )
