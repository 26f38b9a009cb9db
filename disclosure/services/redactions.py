"""Redacted copies: rectangles an investigator draws on an item's picture, filled in black
in a new file (the original untouched), stored write-once by its hash and audited."""

from __future__ import annotations

import hashlib
import io
import warnings
from typing import TYPE_CHECKING

from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.utils.translation import gettext as _
from PIL import Image, ImageDraw, ImageOps

from casefiles import audit
from casefiles.access import Action, can
from evidence import imaging
from evidence.models import EvidenceItem
from evidence.storage import evidence_storage
from people.protection import attachment_refusal

from ..models import Redaction

if TYPE_CHECKING:
    from django.contrib.auth.models import User as Account

MAX_REGIONS = 50
QUALITY = 90
MAX_BYTES = 200_000_000  # a picture file past this is not redacted in memory


def parse_regions(text: str) -> list[list[int]]:
    """One rectangle a line: ``left, top, width, height`` in the picture's pixels."""
    regions = []
    for n, line in enumerate((text or "").splitlines(), 1):
        if not line.strip():
            continue
        parts = [p.strip() for p in line.replace(";", ",").split(",")]
        if len(parts) != 4 or not all(p.isdigit() and len(p) <= 6 for p in parts):
            raise ValidationError(
                {"regions": _("Line %(n)d: give left, top, width, height in pixels.") % {"n": n}}
            )
        left, top, width, height = (int(p) for p in parts)
        if width == 0 or height == 0:
            raise ValidationError({"regions": _("Line %(n)d: an empty rectangle.") % {"n": n}})
        regions.append([left, top, width, height])
    if not regions or len(regions) > MAX_REGIONS:
        raise ValidationError(
            {"regions": _("Draw between 1 and %(n)d rectangles.") % {"n": MAX_REGIONS}}
        )
    return regions


def _redacted_jpeg(data: bytes, regions: list[list[int]]) -> bytes:
    with warnings.catch_warnings():
        warnings.simplefilter("error", Image.DecompressionBombWarning)
        try:
            opened = Image.open(io.BytesIO(data), formats=imaging.PIL_FORMATS)
            if opened.width * opened.height > imaging.MAX_PIXELS:
                raise ValidationError(_("This picture is too large to redact."))
            img = ImageOps.exif_transpose(opened).convert("RGB")
        except (OSError, Image.DecompressionBombWarning, Image.DecompressionBombError):
            raise ValidationError(_("Only a picture Athar can decode is redacted.")) from None
    for left, top, width, height in regions:
        if left + width > img.width or top + height > img.height:
            raise ValidationError(
                {
                    "regions": _("A rectangle reaches outside the picture (%(w)d by %(h)d pixels).")
                    % {"w": img.width, "h": img.height}
                }
            )
        ImageDraw.Draw(img).rectangle((left, top, left + width - 1, top + height - 1), fill=0)
    out = io.BytesIO()
    img.save(out, "JPEG", quality=QUALITY)  # no EXIF: the camera's metadata stays out too
    return out.getvalue()


def redact_item(
    *, actor: Account, item: EvidenceItem, regions: list[list[int]], reason: str
) -> Redaction:
    """A redacted copy of ``item``'s picture (upright, as shown), audited."""
    if not can(actor, Action.ADD_EVIDENCE, item.case) or attachment_refusal(actor, item):
        raise PermissionDenied(_("Your role in this case does not allow this step."))
    reason = (reason or "").strip()
    if not reason or "\x00" in reason:
        raise ValidationError({"reason": _("Say why the picture is redacted.")})
    if item.original.size > MAX_BYTES:
        raise ValidationError(_("This picture is too large to redact."))
    store = evidence_storage()
    with store.open(item.original.storage_key) as fh:
        data = fh.read()
    if hashlib.sha256(data).hexdigest() != item.original.sha256:
        raise ValidationError(_("The original does not match its hash: it is not redacted."))
    redacted = _redacted_jpeg(data, regions)
    written = store.write_original(iter([redacted]))
    row = Redaction(
        case=item.case,
        item=item,
        original_sha256=item.original.sha256,
        regions=regions,
        reason=reason,
        made_by=actor,
        sha256=written.sha256,
        size=written.size,
        storage_key=written.key,
        tool=f"{imaging.TOOL}, JPEG quality {QUALITY}, black rectangles",
    )
    with transaction.atomic(durable=True):
        row.save()
        audit.record(
            actor,
            "disclosure.redact",
            target=item,
            case=item.case,
            redaction=row.pk,
            regions=regions,
            reason=reason,
            sha256=written.sha256,
            original_sha256=item.original.sha256,
        )
    return row
