"""What a package's metadata says, read from the database in a few queries for all its
records at once: each item's row of items.csv / items.json (with what it withholds),
its custody chain with the audit entries that bind it, each testimony's approved
statement, and the people named or given as pseudonyms. The audit excerpt and the
withholding of its entries' details are ``excerpt``; the Merkle proofs, ``anchoring``."""

from __future__ import annotations

import csv
import io
import json
import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from datetime import UTC, date, datetime
from decimal import Decimal
from typing import Any
from uuid import UUID

from casefiles.bindings import columns_of, row_hash
from evidence.models import CustodyEvent, EvidenceItem
from legal.models import ElementLink, ReviewDecision
from people.models import Person, Testimony, TestimonyVersion

from .contents import Consents, named_fields, testimony_ref
from .models import Package, Redaction
from .protected import Protected, shielded

CUSTODY_TABLE = CustodyEvent._meta.db_table
NOT_REDACTED = "none: the original, whole"
# An item that goes as a redacted copy (protection or consent required it) does not carry
# what its original's metadata could identify a person or a place by: its name and path on
# the medium (a name, a phone's owner), where it was taken and with which camera (a
# serial, a device someone owns), how and on what medium it came in (a named stick, a
# handover), and the title when it is only the file's name, as intake gives it. Each such
# field says so, rather than being left blank. This list is the one rule: items.json,
# items.csv and the custody report (PDF) show these fields from the row alone, and the
# audit excerpt withholds the details of any entry naming one of their values.
WITHHELD = "withheld: the item goes as a redacted copy"
WITHHELD_WHEN_REDACTED = (
    "original_filename",
    "original_path",
    "gps_latitude",
    "gps_longitude",
    "camera",
    "acquisition_method",
    "medium",
)
# by code, goes as this unless the approver kept it with a reason (decision 0029).
WITHHELD_PROTECTED = "withheld: it names a protected person"
# What the package says instead of the code of a High or Critical person whose consent
# does not cover the purpose (a redaction's reason, for one).
NEUTRAL = "a protected person"
ITEM_FIELDS = [
    "export_id",
    "file",
    "payload",
    "reference",
    "kind",
    "title",
    "original_filename",
    "original_path",
    "sha256",
    "sha512",
    "size",
    "media_type",
    "date_taken",
    "gps_latitude",
    "gps_longitude",
    "camera",
    "intake_date",
    "acquired_from",
    "acquisition_method",
    "medium",
    "source",
    "review_status",
    "reviewers",
    "legal_links",
    "sensitivity",
    "graphic",
    "redaction",
]


def plain(value: Any) -> Any:
    """A column's value as the audit chain's bindings hash it (casefiles/bindings.py)."""
    if isinstance(value, datetime):
        return value.astimezone(UTC).isoformat(timespec="microseconds")
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, UUID | Decimal):
        return str(value)
    return value


def dumps(doc: Any) -> bytes:
    return (json.dumps(doc, ensure_ascii=False, sort_keys=True, indent=2) + "\n").encode()


def person_label(
    package: Package,
    person: Person | None,
    named: dict[str, list[str]],
    consents: Consents | None = None,
) -> dict:
    """A person as the package gives them: the code, and the names allowed, field by field."""
    if person is None:
        return {}
    out: dict[str, Any] = {"code": person.code}
    fields = named_fields(package, person, consents)
    if fields:
        identity = person.open_identity()
        for name in fields:
            out[name] = getattr(identity, name)
        named[person.code] = fields
    return out


def _decisions(kind: str, pks: Sequence[int]) -> dict[int, list[dict]]:
    rows = ReviewDecision.objects.filter(**{f"{kind}__in": pks}).select_related("actor")
    found: dict[int, list[dict]] = defaultdict(list)
    for d in rows.order_by("at", "pk"):
        found[getattr(d, f"{kind}_id")].append(
            {
                "from": d.from_status,
                "to": d.to_status,
                "by": d.actor.get_username(),
                "at": plain(d.at),
                "comment": d.comment,
                "sha256": d.sha256,
            }
        )
    return found


def _links(kind: str, pks: Sequence[int]) -> dict[int, list[dict]]:
    rows = ElementLink.objects.filter(**{f"{kind}__in": pks}, withdrawal__isnull=True)
    rows = rows.select_related("element", "author", "confirmation__confirmed_by")
    found: dict[int, list[dict]] = defaultdict(list)
    for link in rows.order_by("pk"):
        confirmation = getattr(link, "confirmation", None)
        found[getattr(link, f"{kind}_id")].append(
            {
                "element": link.element.code,
                "stance": link.stance,
                "proposition": link.proposition,
                "by": link.author.get_username(),
                "confirmed_by": confirmation.confirmed_by.get_username() if confirmation else "",
            }
        )
    return found


_OF = "_disclosure_package"  # the package a record was read for (items_of, testimonies_of)


def items_of(package: Package) -> list[EvidenceItem]:
    pks = package.contents.get("items", [])
    rows = EvidenceItem.objects.filter(case=package.case, pk__in=pks)
    rows = rows.select_related("original", "provenance", "source_person", "case")
    found = list(rows.order_by("pk"))
    for item in found:
        setattr(item, _OF, package)
    return found


def testimonies_of(package: Package) -> list[Testimony]:
    pks = package.contents.get("testimonies", [])
    rows = Testimony.objects.filter(case=package.case, pk__in=pks).select_related("witness")
    found = list(rows.order_by("pk"))
    for testimony in found:
        setattr(testimony, _OF, package)
    return found


def _package_of(*groups: Iterable[Any]) -> Package | None:
    for group in groups:
        for record in group:
            if (package := getattr(record, _OF, None)) is not None:
                return package
    return None


def protected_of(package: Package) -> Protected:
    """The case's protected people as this package sees them (read once per package)."""
    found = getattr(package, "_disclosure_protected", None)
    if found is None:
        case = package.case
        found = Protected(case, package.purpose, package.recipient, Consents(case))
        package._disclosure_protected = found  # type: ignore[attr-defined]
    return found


def shields(
    package: Package, items: Sequence[EvidenceItem], redactions: dict[int, Redaction]
) -> dict[int, list[str]]:
    """Per whole item, the row fields withheld because they name a protected person: what
    the approval froze (``contents["withheld_fields"]``), and what names one now (a
    person registered since), but for what the approver kept (``kept_fields``)."""
    if package.pk is None:  # one item's report, outside any package
        return {}
    frozen = package.contents.get("withheld_fields", {})
    kept = package.contents.get("kept_fields", {})
    protected = protected_of(package)
    out = {}
    for item in items:
        if item.pk in redactions:
            continue
        fields = set(shielded(protected.matches(item), kept.get(str(item.pk), {})))
        fields |= set(frozen.get(str(item.pk), [])) - set(kept.get(str(item.pk), {}))
        if fields:
            out[item.pk] = sorted(fields)
    return out


def shielded_values(item: EvidenceItem, fields: Iterable[str]) -> list[str]:
    """The values of a whole item's withheld ``fields``, as text to look for elsewhere
    (the camera's make and model apart, the file's name without its extension)."""
    p = getattr(item, "provenance", None)
    values = identifying(item) | {"title": item.title}
    found = []
    for name in fields:
        found.append(values[name])
        if name == "camera" and p is not None:
            found += [p.camera_make, p.camera_model]
        if name == "medium" and p is not None:
            found.append(p.medium_serial)
        if name == "original_filename":
            stem = item.original_filename.rpartition(".")[0]
            found.append(stem if len(stem) > 3 else "")
    return sorted({v for v in found if v})


def export_id(package: Package, n: int) -> str:
    return f"{package.code}-{n:04d}"


def file_name(package: Package, n: int, item: EvidenceItem) -> str:
    """``PKG-0001-0001.jpg``: the export id and the original's extension, never its name."""
    name = item.original_filename
    ext = name.rpartition(".")[2].lower() if "." in name else ""
    ext = ext if ext.isascii() and ext.isalnum() and len(ext) <= 8 else "bin"
    return f"{export_id(package, n)}.{ext}"


def redactions_of(package: Package) -> dict[int, Redaction]:
    """The redacted copies the approval froze for the package's items."""
    frozen = {int(k): v for k, v in package.contents.get("redacted", {}).items()}
    rows = Redaction.objects.filter(pk__in=frozen.values()).select_related("made_by")
    return {r.item_id: r for r in rows if frozen.get(r.item_id) == r.pk}


def neutral_text(text: str, protected: Protected | None) -> str:
    """``text`` with the code of each protected person whose consent does not cover the
    purpose replaced by ``NEUTRAL``; ``WITHHELD_PROTECTED`` if it names one by name."""
    if protected is None or not text:
        return text
    found = protected.named_in(text)
    if any(by == "name" and protected.unconsented(pk) for pk, by in found):
        return WITHHELD_PROTECTED
    for pk, _by in found:
        if protected.unconsented(pk):
            code = re.escape(protected.people[pk][0].code)
            text = re.sub(rf"(?<![A-Za-z0-9]){code}(?!\d)", NEUTRAL, text, flags=re.IGNORECASE)
    return text


def _redaction_doc(redaction: Redaction | None, protected: Protected | None = None) -> Any:
    if redaction is None:
        return NOT_REDACTED
    return {
        "sha256": redaction.sha256,
        "size": redaction.size,
        "original_sha256": redaction.original_sha256,
        "regions": redaction.regions,
        "made_by": redaction.made_by.get_username(),
        "made_at": plain(redaction.made_at),
        "reason": neutral_text(redaction.reason, protected),
        "tool": redaction.tool,
    }


def _names_the_file(title: str, filename: str) -> bool:
    stem = filename.rpartition(".")[0] or filename
    return bool(filename) and (filename in title or (len(stem) > 3 and stem in title))


def identifying(item: EvidenceItem) -> dict[str, str]:
    """The original's value of each field of ``WITHHELD_WHEN_REDACTED``, as a whole
    original's row gives it ("" when not known)."""
    p = getattr(item, "provenance", None)
    camera = " ".join(x for x in (p.camera_make, p.camera_model) if x) if p else ""
    values = {
        "original_filename": item.original_filename,
        "original_path": item.original_path,
        "gps_latitude": plain(p.gps_latitude) if p and p.gps_latitude is not None else "",
        "gps_longitude": plain(p.gps_longitude) if p and p.gps_longitude is not None else "",
        "camera": camera,
        "acquisition_method": p.method if p else "",
        "medium": p.medium if p else "",
    }
    return {name: values[name] for name in WITHHELD_WHEN_REDACTED}  # each one, or KeyError


def withheld_values(item: EvidenceItem) -> list[str]:
    """What the package withholds of a redacted item, as text to look for elsewhere: each
    value of ``identifying``, the camera's make and model apart, and the file's name
    without its extension (when longer than three characters, as for the title)."""
    p = getattr(item, "provenance", None)
    found = [*identifying(item).values(), *((p.camera_make, p.camera_model) if p else ())]
    stem = item.original_filename.rpartition(".")[0]
    if len(stem) > 3:
        found.append(stem)
    return sorted({v for v in found if v})


def item_rows(
    package: Package,
    items: Sequence[EvidenceItem],
    digests: dict[int, dict[str, str]],
    redactions: dict[int, Redaction] | None = None,
) -> tuple[list[dict], dict[str, list[str]]]:
    """items.json's rows (items.csv's too), and the people named in them."""
    pks = [i.pk for i in items]
    decisions, links = _decisions("item", pks), _links("item", pks)
    named: dict[str, list[str]] = {}
    consents = Consents(package.case)
    rows = []
    redactions = redactions or {}
    shield = shields(package, items, redactions)
    protected = protected_of(package) if package.pk is not None else None
    for n, item in enumerate(items, 1):
        p = getattr(item, "provenance", None)
        redaction = redactions.get(item.pk)
        if redaction is not None:
            file, payload = f"{export_id(package, n)}.jpg", "redacted"
        else:
            file, payload = file_name(package, n, item), "originals"
        row = {
            "export_id": export_id(package, n),
            "file": file,
            "payload": f"{payload}/{file}",
            "reference": item.reference,
            "kind": item.kind,
            "title": item.title,
            "sha256": item.original.sha256,
            "sha512": "" if redaction else digests.get(item.pk, {}).get("sha512", ""),
            "size": item.original.size,
            "media_type": item.original.media_type,
            "date_taken": p.taken_at if p else "",
            "intake_date": plain(p.acquired_at) if p else "",
            "acquired_from": p.acquired_from if p else "",
            "source": person_label(package, item.source_person, named, consents),
            "review_status": item.review_status,
            "reviewers": decisions.get(item.pk, []),
            "legal_links": links.get(item.pk, []),
            "sensitivity": item.sensitivity,
            "graphic": item.is_graphic,
            "redaction": _redaction_doc(redaction, protected),
        }
        if redaction is None:
            row.update(identifying(item))
            row.update(dict.fromkeys(shield.get(item.pk, []), WITHHELD_PROTECTED))
        else:
            row.update(dict.fromkeys(WITHHELD_WHEN_REDACTED, WITHHELD))
            if _names_the_file(item.title, item.original_filename):
                row["title"] = WITHHELD  # the intake's default title: the file's name
        rows.append({name: row[name] for name in ITEM_FIELDS})
    return rows, named


_FORMULA = ("=", "+", "-", "@", "\t", "\r")


def _cell(value: Any) -> str:
    if isinstance(value, dict | list):
        value = json.dumps(value, ensure_ascii=False, sort_keys=True)
    text = "" if value is None else str(value)
    # A spreadsheet would run a cell starting with these as a formula: quote it.
    return f"'{text}" if text.startswith(_FORMULA) else text


def items_csv(rows: Iterable[dict]) -> bytes:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(ITEM_FIELDS)
    for row in rows:
        writer.writerow([_cell(row[f]) for f in ITEM_FIELDS])
    return out.getvalue().encode("utf-8")


def approved_versions(testimonies: Sequence[Testimony]) -> dict[int, TestimonyVersion]:
    """Each testimony's version the last approval reviewed (by its hash), else its latest:
    three queries for the whole package, whatever the number of testimonies."""
    pks = [t.pk for t in testimonies]
    approvals = (
        ReviewDecision.objects.filter(testimony__in=pks, to_status="approved")
        .exclude(sha256="")
        .order_by("testimony_id", "-pk")
        .values_list("testimony_id", "sha256")
    )
    approved: dict[int, str] = {}
    for testimony_id, sha256 in approvals:
        approved.setdefault(testimony_id, sha256)  # the last approval, by pk
    chosen: dict[int, int] = {}  # testimony -> version pk
    latest: dict[int, int] = {}
    versions = TestimonyVersion.objects.filter(testimony__in=pks).order_by(
        "testimony_id", "-number"
    )
    for pk, testimony_id, sha256 in versions.values_list("pk", "testimony_id", "sha256"):
        latest.setdefault(testimony_id, pk)
        if approved.get(testimony_id) == sha256:
            chosen.setdefault(testimony_id, pk)  # the newest version of that hash
    wanted = {t: chosen.get(t, latest[t]) for t in latest}
    rows = TestimonyVersion.objects.in_bulk(list(wanted.values()))
    return {t: rows[pk] for t, pk in wanted.items()}


def testimony_rows(
    package: Package, testimonies: Sequence[Testimony], named: dict[str, list[str]]
) -> list[tuple[dict, str]]:
    pks = [t.pk for t in testimonies]
    decisions, links = _decisions("testimony", pks), _links("testimony", pks)
    consents = Consents(package.case)
    versions = approved_versions(testimonies)
    rows = []
    for n, t in enumerate(testimonies, 1):
        version = versions[t.pk]
        row = {
            "export_id": f"{package.code}-T{n:04d}",
            "file": f"{package.code}-T{n:04d}.txt",
            "reference": testimony_ref(t),
            "witness": person_label(package, t.witness, named, consents),
            "taken_at": plain(t.taken_at),
            "language": t.language,
            "mode": t.mode,
            "version": version.number,
            "sha256": version.sha256,
            "review": decisions.get(t.pk, []),
            "legal_links": links.get(t.pk, []),
        }
        rows.append((row, version.text))
    return rows


def custody_of(items: Sequence[EvidenceItem]) -> dict[int, list[dict]]:
    """Each item's custody events, every column as bound into the audit chain."""
    columns = columns_of(CustodyEvent)
    found: dict[int, list[dict]] = defaultdict(list)
    rows = CustodyEvent.objects.filter(item__in=[i.pk for i in items]).order_by("at", "pk")
    for values in rows.values_list(*columns):
        event = {c: plain(v) for c, v in zip(columns, values, strict=True)}
        found[event["item_id"]].append({"columns": event, "row_hash": row_hash(event)})
    return found
