"""The custody report (PDF, WeasyPrint): for each item its thumbnail (blurred if graphic),
hashes, provenance, custody timeline, fixity, review decisions and legal links; headings in
English and Arabic (shaped, right to left, with a font the Makefile installs). On every
page: the package's id, the page number and the SHA-256 of the bag's
tagmanifest-sha256.txt (for one item outside a package: its reference and SHA-256).

Nothing is fetched: images are embedded as ``data:`` URLs and the URL fetcher refuses
every other URL.
"""

from __future__ import annotations

import base64
import io
from collections.abc import Sequence
from typing import Any

from django.template.loader import render_to_string
from django.utils import translation

from evidence import imaging
from evidence.models import Derivative, EvidenceItem
from evidence.storage import evidence_storage

from . import exporting
from .models import Package, Redaction


class RefusedFetch(ValueError):
    pass


def weasyprint() -> Any:
    """WeasyPrint, imported without the switch it throws on import: it sets Pillow's
    ``LOAD_TRUNCATED_IMAGES`` for the whole process, and intake in that process would then
    decode a truncated photo instead of flagging it. Every import of it goes through here."""
    from PIL import ImageFile

    before = ImageFile.LOAD_TRUNCATED_IMAGES
    import weasyprint as module
    import weasyprint.images
    import weasyprint.urls

    ImageFile.LOAD_TRUNCATED_IMAGES = before
    return module


def local_only() -> Any:
    """WeasyPrint's URL fetcher: ``data:`` URLs only; nothing from a network or a disk."""

    weasyprint()  # first: imported here, it sets no switch for the process
    from weasyprint.urls import URLFetcher

    class LocalOnly(URLFetcher):
        def fetch(self, url: str, headers: Any = None) -> Any:
            if not url.startswith("data:"):
                raise RefusedFetch(f"the report fetches nothing: {url[:80]}")
            return super().fetch(url, headers)

    return LocalOnly(allowed_protocols={"data"})


def _redacted_thumbnail(redaction: Redaction) -> str:
    """A thumbnail of the redacted copy: the original's would show what it covers."""
    from PIL import Image

    with evidence_storage().open(redaction.storage_key) as fh:
        img = Image.open(io.BytesIO(fh.read()), formats=["JPEG"])
        img.thumbnail((imaging.THUMBNAIL_SIZE, imaging.THUMBNAIL_SIZE))
        data = imaging.encode_jpeg(img.convert("RGB"), imaging.THUMBNAIL_QUALITY)
    return f"data:image/jpeg;base64,{base64.b64encode(data).decode()}"


def _thumbnails(items: Sequence[EvidenceItem], redactions: dict[int, Redaction]) -> dict[int, str]:
    """Each item's thumbnail as a data URL; a graphic item's blurred one, or none; a
    redacted item's made from its redacted copy (blurred too if graphic: none)."""
    rows = Derivative.objects.filter(
        original__in=[i.original_id for i in items], kind__in=["thumbnail", "blurred"]
    )
    found = {(d.original_id, d.kind): d for d in rows}
    store = evidence_storage()
    out = {}
    for item in items:
        if item.pk in redactions:
            if not item.is_graphic:
                out[item.pk] = _redacted_thumbnail(redactions[item.pk])
            continue
        d = found.get((item.original_id, "blurred" if item.is_graphic else "thumbnail"))
        if d is None:
            continue
        with store.open(d.storage_key) as fh:
            data = fh.read()
        out[item.pk] = f"data:{d.media_type};base64,{base64.b64encode(data).decode()}"
    return out


def _fixity(items: Sequence[EvidenceItem]) -> dict[int, dict]:
    return {
        i.pk: {
            "integrity": i.get_integrity_display(),
            "checked_at": exporting.plain(i.integrity_checked_at) or "",
        }
        for i in items
    }


def _render(title: str, running: str, footer: str, items: list[dict]) -> bytes:
    weasyprint()
    from weasyprint import HTML

    with translation.override("en"):
        html = render_to_string(
            "disclosure/report.html",
            {
                "title": title,
                "running": running,
                "footer": footer,
                "items": items,
                "withheld": exporting.WITHHELD,
            },
        )
    document = HTML(string=html, url_fetcher=local_only(), base_url="data:,")
    return document.write_pdf(uncompressed_pdf=False)


def _item_docs(
    items: Sequence[EvidenceItem], rows: list[dict], redactions: dict[int, Redaction]
) -> list:
    custody = exporting.custody_of(items)
    thumbs, fixity = _thumbnails(items, redactions), _fixity(items)
    docs = []
    for item, row in zip(items, rows, strict=True):
        docs.append(
            {
                "row": row,  # what items.csv says, withheld fields marked so: nothing else
                "thumbnail": thumbs.get(item.pk, ""),
                "graphic": item.is_graphic,
                "custody": [e["columns"] for e in custody.get(item.pk, [])],
                "fixity": fixity[item.pk],
            }
        )
    return docs


def package_report(package: Package) -> bytes:
    """The report of a built package (its tagmanifest hash on every page)."""
    items = exporting.items_of(package)
    redactions = exporting.redactions_of(package)
    rows, _named = exporting.item_rows(package, items, {}, redactions)
    return _render(
        f"{package.code} · {package.case.reference}",
        f"{package.code}",
        f"tagmanifest-sha256.txt SHA-256 {package.tagmanifest_sha256}",
        _item_docs(items, rows, redactions),
    )


def item_report(item: EvidenceItem) -> bytes:
    """The report of one item, outside any package (its SHA-256 on every page)."""
    item = (
        EvidenceItem.objects.select_related("original", "provenance", "source_person", "case")
        .filter(pk=item.pk)
        .get()
    )
    placeholder = Package(case=item.case, purpose="investigation")
    rows, _named = exporting.item_rows(placeholder, [item], {})
    rows[0]["export_id"] = rows[0]["file"] = ""
    return _render(
        f"{item.reference} · {item.case.reference}",
        item.reference,
        f"SHA-256 {item.original.sha256}",
        _item_docs([item], rows, {}),
    )
