"""Thumbnails and previews, made again from the verified original; the blurred thumbnails
of graphic items, made from the thumbnail."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..imaging import (
    BLUR_PARAMETERS,
    DECODABLE,
    PREVIEW_PARAMETERS,
    THUMBNAIL_PARAMETERS,
    TOOL,
    Picture,
    blurred_jpeg,
    reduced_jpeg,
)
from ..models import (
    Derivative,
    EvidenceItem,
)
from ..originals import derivative_key
from ..storage import evidence_storage
from .custody import open_verified

if TYPE_CHECKING:
    from casefiles.models import Case


def ensure_preview(item: EvidenceItem) -> Derivative | None:
    """The ~1024 px preview, made on first view (never during intake) from the verified
    original."""
    if item.original.media_type not in DECODABLE:
        return None
    made = _from_original(item, PREVIEW_PARAMETERS)
    if made is None:
        return None
    key = derivative_key(item.original.sha256, "preview", "jpg")
    evidence_storage().write_derivative(key, made.data)
    _record_derivative(item, Derivative.Kind.PREVIEW, key, made, dict(PREVIEW_PARAMETERS))
    return Derivative.objects.get(original=item.original, kind=Derivative.Kind.PREVIEW)


def _record_derivative(
    item: EvidenceItem, kind: str, key: str, picture: Picture, params: dict[str, Any]
) -> None:
    """The row of a derivative just written (a JPEG), unless another request wrote it."""
    Derivative.objects.bulk_create(
        [
            Derivative(
                original=item.original,
                kind=kind,
                storage_key=key,
                media_type="image/jpeg",
                width=picture.width,
                height=picture.height,
                size=len(picture.data),
                tool=TOOL,
                parameters=params,
            )
        ],
        ignore_conflicts=True,
    )


def remake_thumbnail(item: EvidenceItem, derivative: Derivative) -> bytes | None:
    """The thumbnail made again from the verified original, as its row says it was made
    (a crash can leave the row without its file); None if the original cannot give one.

    Only the file is written: the row already describes it.
    """
    made = _from_original(item, derivative.parameters or {})
    if made is None:
        return None
    try:
        evidence_storage().write_derivative(derivative.storage_key, made.data)
    except OSError:
        pass  # served all the same; the next view tries again
    return made.data


def blurred_thumbnail(item: EvidenceItem) -> bytes | None:
    """The blurred thumbnail of an item (a graphic one), or None when it has no picture.

    Made at intake for a graphic batch; for an item marked graphic later, made here on its
    first request (from the stored thumbnail, or the verified original if that is lost),
    stored and recorded. Never the thumbnail itself: what cannot be blurred is not shown."""
    made = {
        d.kind: d
        for d in Derivative.objects.filter(
            original=item.original_id,
            kind__in=[Derivative.Kind.THUMBNAIL, Derivative.Kind.BLURRED],
        )
    }
    blurred = made.get(Derivative.Kind.BLURRED)
    if blurred is not None:
        try:
            with evidence_storage().open(blurred.storage_key) as fh:
                return fh.read()
        except OSError:
            pass  # lost (a crash after its row): made again below
    thumbnail = _thumbnail_bytes(item, made.get(Derivative.Kind.THUMBNAIL))
    if thumbnail is None:
        return None
    try:
        picture = blurred_jpeg(thumbnail)
    except Exception:
        return None
    key = derivative_key(item.original.sha256, "blurred", "jpg")
    try:
        evidence_storage().write_derivative(key, picture.data)
    except OSError:
        return picture.data  # served all the same; the next request tries again
    if blurred is None:
        _record_derivative(item, Derivative.Kind.BLURRED, key, picture, dict(BLUR_PARAMETERS))
    return picture.data


def _thumbnail_bytes(item: EvidenceItem, thumbnail: Derivative | None) -> bytes | None:
    if thumbnail is not None:
        try:
            with evidence_storage().open(thumbnail.storage_key) as fh:
                return fh.read()
        except OSError:
            return remake_thumbnail(item, thumbnail)
    if item.original.media_type not in DECODABLE:
        return None
    made = _from_original(item, THUMBNAIL_PARAMETERS)  # none was stored at intake
    return made.data if made is not None else None


def make_missing_thumbnails(*, case: Case | None = None) -> tuple[int, list[EvidenceItem]]:
    """Thumbnails of the pictures whose thumbnail could not be stored at intake (flagged
    ``derivative_failed``: a full disk, say), made from their verified originals as at
    intake, once per stored file. Returns how many were made and the items still without
    one. The flag stays: it records what happened at intake."""
    items = (
        EvidenceItem.objects.select_related("original")
        .filter(original__media_type__in=DECODABLE)
        .exclude(original__derivatives__kind=Derivative.Kind.THUMBNAIL)
        .order_by("pk")
    )
    if case is not None:
        items = items.filter(case=case)
    made: set[int] = set()
    failed: set[int] = set()
    left: list[EvidenceItem] = []
    for item in items.iterator(chunk_size=500):
        if item.original_id in made or not any(
            f.get("code") == "derivative_failed" for f in item.flags
        ):
            continue  # a duplicate of one just made, or a picture that cannot give one
        if item.original_id in failed:
            left.append(item)  # the same bytes as one that failed: not read again
            continue
        thumb = _from_original(item, THUMBNAIL_PARAMETERS)
        key = derivative_key(item.original.sha256, "thumbnail", "jpg")
        try:
            if thumb is None:
                raise OSError("the original cannot give one")
            evidence_storage().write_derivative(key, thumb.data)
        except OSError:
            failed.add(item.original_id)
            left.append(item)
            continue
        _record_derivative(item, Derivative.Kind.THUMBNAIL, key, thumb, dict(THUMBNAIL_PARAMETERS))
        made.add(item.original_id)
    return len(made), left


def _from_original(item: EvidenceItem, params: dict[str, Any]) -> Picture | None:
    """A reduced JPEG made from the verified original with these parameters; None if the
    original is missing, changed or cannot be decoded."""
    fh, _ = open_verified(item)
    if fh is None:
        return None  # missing or changed: the fixity sweep records it, nothing is remade
    try:
        with fh:
            return reduced_jpeg(fh, params)
    except Exception:
        return None
