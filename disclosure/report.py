"""The custody report (PDF, WeasyPrint), drawn from a bag's own files.

``render_from_bag(root)`` reads nothing but the bag: ``bag-info.txt``,
``manifest-sha256.txt``, ``metadata/package.json``, ``items.json``, ``testimonies.json``,
``custody/<export id>.json``, the public key and ``metadata/thumbnails/<export id>.jpg``
(which ``thumbnail_tags`` makes at the build, from the stored derivatives). It never reads
itself (``REPORT_NAME``), the tag manifests, or any value the build fills once the payload
is copied (items.json's ``sha512``: the report shows SHA-256 and points to
manifest-sha512.txt), so the build can render it from the metadata while the payload is
still copying, and the finished bag renders to the same bytes again: nothing in the PDF
depends on the clock, the machine, the database or the order files were written in.

At the front, one page in English and Arabic says what the package holds and how to check
it; then for each item a compact table (label and value on one row, each label in English
and Arabic from the .po), its custody as table rows, its review and legal links. Every page
carries the package's id, its page number and the SHA-256 of manifest-sha256.txt.

``item_report(item)`` is one item outside any package, from the database, with the same
template and code (its reference and SHA-256 on every page).

Nothing is fetched: images are embedded as ``data:`` URLs and the URL fetcher refuses
every other URL.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
from collections.abc import Sequence
from html import escape
from pathlib import Path
from typing import Any

from django.template.loader import render_to_string
from django.utils import translation
from django.utils.safestring import mark_safe

from evidence import imaging
from evidence.models import Derivative, EvidenceItem
from evidence.storage import evidence_storage

from . import exporting
from .models import Package, Redaction
from .report_words import ACTIONS, HASH_RESULTS, LABELS, SUMMARY, Clock, both, choices_both

# Where the build puts the report among the bag's tag files. The report never reads it.
REPORT_NAME = "custody-report.pdf"
THUMBNAILS = "metadata/thumbnails"
# What the build fills only once the payload is copied: never read, never shown.
FILLED_AFTER_COPY = ("sha512",)
WELL_KNOWN_KEYS = "/.well-known/athar-signing-keys"


class RefusedFetch(ValueError):
    pass


class NotABag(ValueError):
    """The folder lacks a file the report is drawn from (named)."""


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


# --- the bag, read --------------------------------------------------------------------


def _read(root: Path, name: str) -> bytes:
    path = root / name
    if not path.is_file():
        raise NotABag(f"{name} is missing from {root}: the report is drawn from it")
    return path.read_bytes()


def _json(root: Path, name: str) -> Any:
    return json.loads(_read(root, name))


def bag_info(text: str) -> dict[str, str]:
    """bag-info.txt's ``Label: value`` lines (continuation lines joined)."""
    out: dict[str, str] = {}
    last = ""
    for line in text.splitlines():
        if line[:1] in (" ", "\t") and last:
            out[last] += " " + line.strip()
        elif ":" in line:
            last, _, value = line.partition(":")
            out[last.strip()] = value.strip()
    return out


def _public_key(root: Path) -> tuple[str, str]:
    """The package's public key file (its path in the bag) and its fingerprint: SHA-256 of
    the DER SubjectPublicKeyInfo, what ``openssl pkey -pubin -outform DER | sha256sum``
    prints; ("", "") when the bag holds none yet."""
    from cryptography.hazmat.primitives import serialization

    found = sorted(
        p
        for p in root.rglob("public-key.pem")
        if p.is_file() and not p.relative_to(root).as_posix().startswith("data/")
    )
    if not found:
        return "", ""
    key = serialization.load_pem_public_key(found[0].read_bytes())
    der = key.public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return found[0].relative_to(root).as_posix(), hashlib.sha256(der).hexdigest()


def _data_url(data: bytes, media_type: str = "image/jpeg") -> str:
    return f"data:{media_type};base64,{base64.b64encode(data).decode()}"


def _fixity(events: list[dict]) -> dict:
    """The custody chain's last event that re-checked the file's hash."""
    for event in reversed(events):
        if event.get("hash_result"):
            return event
    return {}


def _item_doc(row: dict, events: list[dict], thumbnail: str) -> dict:
    row = {k: v for k, v in row.items() if k not in FILLED_AFTER_COPY}
    return {
        "row": row,
        "redaction": row["redaction"] if isinstance(row.get("redaction"), dict) else None,
        "thumbnail": thumbnail,
        "graphic": bool(row.get("graphic")),
        "custody": events,
        "fixity": _fixity(events),
    }


def bag_context(root: Path) -> dict:
    """What the report shows, read from the bag's files alone."""
    root = Path(root)
    info = bag_info(_read(root, "bag-info.txt").decode("utf-8"))
    manifest = hashlib.sha256(_read(root, "manifest-sha256.txt")).hexdigest()
    package = _json(root, "metadata/package.json")
    rows = _json(root, "metadata/items.json")
    testimonies = _json(root, "metadata/testimonies.json")
    items, events = [], 0
    for row in rows:
        export_id = row["export_id"]
        custody = _json(root, f"metadata/custody/{export_id}.json")
        if custody.get("reference") != row["reference"]:
            raise NotABag(f"metadata/custody/{export_id}.json is not {row['reference']}'s")
        chain = [e["columns"] for e in custody.get("events", [])]
        events += len(chain)
        thumb = root / THUMBNAILS / f"{export_id}.jpg"
        picture = _data_url(thumb.read_bytes()) if thumb.is_file() else ""
        items.append(_item_doc(row, chain, picture))
    key_path, fingerprint = _public_key(root)
    code = info.get("External-Identifier") or package.get("package", "")
    left_out = package.get("left_out", {})
    return {
        "code": code,
        "title": f"{code} · {package.get('case', '')}",
        "running": code,
        "footer": f"manifest-sha256.txt SHA-256 {manifest}",
        "package": package,
        "info": info,
        "summary": {
            "items": len(items),
            "testimonies": len(testimonies),
            "events": events,
            "left_out": sum(len(v) for v in left_out.values()),
            "key_path": key_path or "public-key.pem",
            "fingerprint": fingerprint,
            "bagging_date": info.get("Bagging-Date", ""),
        },
        "items": items,
        # /CreationDate: the bag's own date, never the clock.
        "created": info.get("Bagging-Date", ""),
    }


# --- rendering -----------------------------------------------------------------------


RLI, PDI = "\u2067", "\u2069"  # right-to-left isolate: an Arabic run keeps to itself


def _pair(en: str, ar: str) -> str:
    """English, then the Arabic isolated right to left, on one line: one text box (the
    cheap way to lay out; WeasyPrint's time goes by text boxes)."""
    return f"{en} · {RLI}{ar}{PDI}" if ar and ar != en else en


class _Items:
    """Each item's table as HTML, built here rather than by the template engine: at 2,000
    items, a template tag per cell costs more than the escaping."""

    def __init__(self, labels: dict[str, dict[str, str]]) -> None:
        self.clock = Clock()
        self.L = {k: _pair(v["en"], v["ar"]) for k, v in labels.items()}
        self.actions = choices_both(ACTIONS)
        self.results = choices_both(HASH_RESULTS)

    def when(self, value: Any) -> str:
        words = self.clock(value)
        return _pair(words["en"], words["ar"]) if words else "—"

    def _words(self, table: dict, value: str) -> str:
        words = table.get(value)
        return _pair(words["en"], words["ar"]) if words else value

    def html(self, it: dict) -> str:
        row, L, esc = it["row"], self.L, escape
        out = []
        head = " · ".join(x for x in (row.get("export_id"), row.get("reference")) if x)
        if row.get("title"):
            head += f" · {row['title']}"
        out.append(
            '<table class="it"><col class="l"><col>'
            f'<tr class="h"><td colspan="2">{esc(head)}</td></tr>'
        )

        def line(label: str, *values: str, cls: str = "") -> None:
            cell = "<br>".join(esc(v) for v in values if v) or "—"
            td = f'<td class="{cls}">' if cls else "<td>"
            out.append(f"<tr><th>{esc(label)}</th>{td}{cell}</td></tr>")

        if it["thumbnail"]:
            note = L["graphic_blurred"] if it["graphic"] else ""
            img = f'<img src="{it["thumbnail"]}" alt="{esc(row["reference"])}">'
            out.append(
                f"<tr><th>{esc(L['picture'])}</th><td>{img}"
                + (f"<br>{esc(note)}" if note else "")
                + "</td></tr>"
            )
        elif it["graphic"]:
            line(L["picture"], L["graphic_hidden"])
        if row.get("payload"):
            line(L["payload"], f"data/{row['payload']}")
        line(L["sha256"], row.get("sha256", ""), cls="m")
        if it["redaction"]:
            r = it["redaction"]
            line(
                L["redacted"],
                L["redacted_note"],
                f"SHA-256 {r.get('sha256', '')}",
                f"{len(r.get('regions') or [])} {L['regions']} · {r.get('made_by', '')} · "
                f"{r.get('reason', '')}",
            )
        line(
            L["size"],
            f"{row.get('size', '')} bytes · {row.get('kind', '')} · "
            f"{row.get('media_type', '')} · {row.get('sensitivity', '')}",
        )
        line(L["original_filename"], row.get("original_filename") or "—")
        line(L["original_path"], row.get("original_path") or "—")
        source = row.get("source") or {}
        line(
            L["source"],
            " · ".join(
                v
                for v in (source.get("code"), source.get("name_latin"), source.get("name_ar"))
                if v
            )
            or "—",
        )
        line(L["acquired_from"], row.get("acquired_from") or "—")
        line(L["intake_date"], self.when(row.get("intake_date")))
        line(L["acquisition_method"], row.get("acquisition_method") or "—")
        line(L["medium"], row.get("medium") or "—")
        line(L["date_taken"], self.when(row.get("date_taken")))
        line(L["camera"], row.get("camera") or "—")
        lat = row.get("gps_latitude")
        gps = (
            exporting.WITHHELD
            if lat == exporting.WITHHELD
            else (f"{lat}, {row.get('gps_longitude', '')}" if lat else "—")
        )
        line(L["gps"], gps)
        fixity = it["fixity"]
        if fixity:
            line(
                L["fixity"],
                f"{self.when(fixity.get('at'))} · "
                f"{self._words(self.results, fixity.get('hash_result', ''))}",
            )
        else:
            line(L["fixity"], L["fixity_none"])
        if it.get("integrity"):
            line(L["integrity"], it["integrity"])
        reviews = [
            f"{d.get('from')} → {d.get('to')} · {d.get('by')} · {self.when(d.get('at'))}"
            + (f" · {d['comment']}" if d.get("comment") else "")
            for d in row.get("reviewers", [])
        ]
        line(L["review_status"], row.get("review_status", ""), *reviews)
        links = [
            f"{link.get('element')} · {link.get('stance')} · {link.get('proposition')} · "
            f"{link.get('by')}" + (f", {link['confirmed_by']}" if link.get("confirmed_by") else "")
            for link in row.get("legal_links", [])
        ]
        line(L["legal"], *links) if links else line(L["legal"], "—")
        out.append(
            f'<tr class="c"><th>{esc(L["when"])}</th><td>{esc(L["custody"])}: '
            f"{esc(L['action'])} — {esc(L['from_to'])} — {esc(L['purpose'])} — "
            f"{esc(L['hash_check'])}</td></tr>"
        )
        for e in it["custody"]:
            result = e.get("hash_result", "")
            line(
                self.when(e.get("at")),
                f"{self._words(self.actions, e.get('action', ''))} — "
                f"{e.get('from_custodian') or '—'} → {e.get('to_custodian') or '—'} — "
                f"{e.get('purpose') or '—'} — "
                + (self._words(self.results, result) if result else "—"),
            )
        if not it["custody"]:
            line(L["custody"], L["none"])
        out.append("</table>")
        return "".join(out)


def _render(context: dict) -> bytes:
    weasyprint()
    from weasyprint import HTML

    labels = both(LABELS)
    items = _Items(labels)
    body = "".join(items.html(it) for it in context["items"])
    package = context.get("package") or {}
    for key in ("requested_at", "approved_at"):
        if package.get(key):
            package[f"{key}_words"] = items.when(package[key])
    summary_words = both(SUMMARY)
    for lang in ("en", "ar"):
        how = summary_words["fingerprint_how"]
        how[lang] = how[lang] % {"path": WELL_KNOWN_KEYS}
    with translation.override("en"):
        html = render_to_string(
            "disclosure/report.html",
            {
                **context,
                "L": labels,
                "S": summary_words,
                "items_html": mark_safe(body),  # noqa: S308 (every value escaped above)
            },
        )
    document = HTML(string=html, url_fetcher=local_only(), base_url="data:,")
    # No /ID and no clock: pdf_identifier stays off, and /CreationDate is the bag's date
    # (``<meta name=dcterms.created>``), so the same bag gives the same bytes.
    return document.write_pdf(uncompressed_pdf=False, pdf_identifier=False)


def render_from_bag(root: Path) -> bytes:
    """The custody report PDF of the bag at ``root``, from its files alone (no database)."""
    return _render(bag_context(Path(root)))


# --- the build's thumbnails --------------------------------------------------------------


def _redacted_thumbnail(redaction: Redaction) -> bytes:
    """A thumbnail of the redacted copy: the original's would show what it covers."""
    from PIL import Image

    with evidence_storage().open(redaction.storage_key) as fh:
        img = Image.open(io.BytesIO(fh.read()), formats=["JPEG"])
        img.thumbnail((imaging.THUMBNAIL_SIZE, imaging.THUMBNAIL_SIZE))
        return imaging.encode_jpeg(img.convert("RGB"), imaging.THUMBNAIL_QUALITY)


def _thumbnails(
    items: Sequence[EvidenceItem], redactions: dict[int, Redaction]
) -> dict[int, bytes]:
    """Each item's thumbnail (JPEG): a graphic item's blurred one, or none; a redacted
    item's made from its redacted copy (none if graphic); none without a derivative."""
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
        if d is None or d.media_type != "image/jpeg":
            continue
        with store.open(d.storage_key) as fh:
            out[item.pk] = fh.read()
    return out


def thumbnail_tags(
    package: Package, items: Sequence[EvidenceItem], redactions: dict[int, Redaction]
) -> dict[str, bytes]:
    """``{"metadata/thumbnails/<export id>.jpg": jpeg}`` for the build to add as tag files
    (``items`` in the package's order, as ``exporting.items_of`` gives them)."""
    thumbs = _thumbnails(items, redactions)
    return {
        f"{THUMBNAILS}/{exporting.export_id(package, n)}.jpg": thumbs[item.pk]
        for n, item in enumerate(items, 1)
        if item.pk in thumbs
    }


# --- one item, outside any package, and a built package's report -------------------------


def item_report(item: EvidenceItem) -> bytes:
    """The report of one item, outside any package (its SHA-256 on every page), from the
    database: the same rows a package would hold, the same template."""
    item = (
        EvidenceItem.objects.select_related("original", "provenance", "source_person", "case")
        .filter(pk=item.pk)
        .get()
    )
    placeholder = Package(case=item.case, purpose="investigation")
    rows, _named = exporting.item_rows(placeholder, [item], {})
    rows[0]["export_id"] = rows[0]["file"] = rows[0]["payload"] = ""
    chain = [e["columns"] for e in exporting.custody_of([item]).get(item.pk, [])]
    thumbs = _thumbnails([item], {})
    doc = _item_doc(rows[0], chain, _data_url(thumbs[item.pk]) if item.pk in thumbs else "")
    doc["integrity"] = item.get_integrity_display()
    return _render(
        {
            "code": item.reference,
            "title": f"{item.reference} · {item.case.reference}",
            "running": item.reference,
            "footer": f"SHA-256 {item.original.sha256}",
            "package": None,
            "summary": None,
            "items": [doc],
            "created": "",
        }
    )


def package_report(package: Package) -> bytes:
    """A built package's report: the one its stored tar file holds, or else rendered from
    the tar's own files (never from the database)."""
    import tarfile
    import tempfile

    top = f"{package.code}/"
    wanted = ("bag-info.txt", "manifest-sha256.txt", "metadata/")
    with tarfile.open(package.stored_path, "r:") as tar, tempfile.TemporaryDirectory() as tmp:
        for member in tar:
            name = member.name.removeprefix(top)
            if not member.isfile() or ".." in name.split("/") or name.startswith("/"):
                continue
            fh = tar.extractfile(member)
            if fh is None:
                continue
            if name == REPORT_NAME:
                return fh.read()
            if name.startswith(wanted) or name.endswith("public-key.pem"):
                path = Path(tmp) / name
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(fh.read())
        return render_from_bag(Path(tmp))
