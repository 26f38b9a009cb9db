"""What a package's metadata says, read from the database in a few queries for all its
records at once: each item's row of items.csv / items.json, its custody chain with the
audit entries that bind it, each testimony's approved statement, the audit excerpt with
its checkpoint and inclusion proofs, and the people named or given as pseudonyms."""

from __future__ import annotations

import csv
import io
import json
import re
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import UTC, date, datetime
from decimal import Decimal
from typing import TYPE_CHECKING, Any
from uuid import UUID

from django.db.models import Q

from casefiles import checkpoints
from casefiles.audit import HASHED_FIELDS, details_sha256
from casefiles.bindings import columns_of, row_hash
from casefiles.models import AuditEntry
from evidence.models import CustodyEvent, EvidenceItem
from legal.models import ElementLink, ReviewDecision
from people.models import Person, Testimony, TestimonyVersion

from .contents import (
    CHECKED_FIELDS,
    EXIF,
    ITEM_REF,
    TESTIMONY_REF,
    Consents,
    Protected,
    named_fields,
    shielded,
    testimony_ref,
)
from .models import Package, Redaction

if TYPE_CHECKING:
    from casefiles.models import Case

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
# An audit entry of the excerpt whose details name one of those values goes with its
# details replaced by this (the references filled in) and their digest, which its hash
# covers: the chain still verifies, and the details can be shown later to whoever may
# see them, and checked against the digest.
WITHHELD_DETAILS = (
    "withheld: they name what the package withholds of {refs}, which goes as a redacted "
    "copy; details_sha256 is their digest, which the entry's hash covers"
)
# A sweep of every case once bound all cases' custody events by one entry of no case
# (before such sweeps wrote an entry per case): in a package of one case, its details
# would name other cases' rows.
WITHHELD_NO_CASE = (
    "withheld: an entry of no one case, binding custody events of other cases too; "
    "details_sha256 is their digest, which the entry's hash covers"
)
# A whole item's field that names a protected person (``contents.Protected``), by name or
# by code, goes as this unless the approver kept it with a reason (decision 0029).
WITHHELD_PROTECTED = "withheld: it names a protected person"
SHIELDED_FIELDS = tuple(f for f in CHECKED_FIELDS if f != EXIF)  # row fields it may hit
# What the package says instead of the code of a High or Critical person whose consent
# does not cover the purpose (a redaction's reason, for one).
NEUTRAL = "a protected person"
# Why an entry of the excerpt goes by its digest (decision 0029), beside the two above.
WITHHELD_SHIELDED = (
    "withheld: they name what the package withholds of {refs}, whose fields name a "
    "protected person; details_sha256 is their digest, which the entry's hash covers"
)
WITHHELD_PERSON = (
    "withheld: they name a protected person whose consent does not cover this package's "
    "purpose; details_sha256 is their digest, which the entry's hash covers"
)
WITHHELD_OUTSIDE = (
    "withheld: they name {what} not in this package; details_sha256 is their digest, "
    "which the entry's hash covers"
)
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


def audit_excerpt(
    case: Case, items: Sequence[EvidenceItem], testimonies: Sequence[Testimony], custody: dict
) -> list[AuditEntry]:
    """The entries that concern the package's records: about them, or binding their
    custody events (an entry of the case, or of none: see ``WITHHELD_NO_CASE``). Each
    event is told which entry binds it (``bound_by``)."""
    wanted = {str(e["columns"]["id"]): e for events in custody.values() for e in events}
    targets = [("evidence.evidenceitem", str(i.pk)) for i in items]
    targets += [("people.testimony", str(t.pk)) for t in testimonies]
    by_target = AuditEntry.objects.none()
    for kind in {k for k, _ in targets}:
        ids = [pk for k, pk in targets if k == kind]
        by_target = by_target | AuditEntry.objects.filter(target_type=kind, target_id__in=ids)
    found = {e.seq: e for e in by_target}
    binding = AuditEntry.objects.filter(
        Q(case=case) | Q(case__isnull=True), details__has_key="bound"
    ).order_by("seq")
    for entry in binding.iterator(chunk_size=500):
        rows = entry.details.get("bound", {}).get(CUSTODY_TABLE, {}).get("rows", {})
        hit = False
        for pk in rows.keys() & wanted.keys():
            wanted[pk]["bound_by"] = entry.seq
            hit = True
        if hit:
            found[entry.seq] = entry
    return [found[s] for s in sorted(found)]


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for key, inner in value.items():
            yield str(key)
            yield from _strings(inner)
    elif isinstance(value, list):
        for inner in value:
            yield from _strings(inner)


def withheld_details(
    entries: Sequence[AuditEntry],
    items: Sequence[EvidenceItem],
    redactions: dict[int, Redaction],
    *,
    package: Package | None = None,
    testimonies: Sequence[Testimony] | None = None,
) -> dict[int, str]:
    """``{seq: marker}`` of each entry of the excerpt that goes by its digest alone. In
    this order, the first that holds gives the marker:

    - an entry of no case (``WITHHELD_NO_CASE``);
    - its details name, anywhere in them (keys too, case aside), one of the
      ``withheld_values`` of an item that goes as a redacted copy (``WITHHELD_DETAILS``),
      or of the fields of a whole item withheld because they name a protected person
      (``WITHHELD_SHIELDED``);
    - they name the code of a person under High or Critical protection whose consent does
      not cover the purpose (``WITHHELD_PERSON``);
    - they, or the entry's target, name a record not in the package (``WITHHELD_OUTSIDE``,
      ``outside_records``).

    The package (for its purpose, recipient and testimonies) is ``package``, else the one
    ``items_of`` / ``testimonies_of`` read the records for; without one only the first two
    rules apply."""
    looked_for = {
        item.reference: [v.casefold() for v in withheld_values(item)]
        for item in items
        if item.pk in redactions
    }
    out = {entry.seq: WITHHELD_NO_CASE for entry in entries if entry.case_id is None}
    package = package or _package_of(items, testimonies or [], entries)
    shielded_for: dict[str, list[str]] = {}
    if package is not None:
        by_pk = {item.pk: item for item in items}
        for pk, fields in shields(package, items, redactions).items():
            values = shielded_values(by_pk[pk], fields)
            shielded_for[by_pk[pk].reference] = [v.casefold() for v in values]
    texts = {e.seq: "\x00".join(_strings(e.details)).casefold() for e in entries}
    for entry in entries:
        if entry.seq in out:
            continue
        text = texts[entry.seq]
        rules: tuple[tuple[dict[str, list[str]], str], ...] = (
            (looked_for, WITHHELD_DETAILS),
            (shielded_for, WITHHELD_SHIELDED),
        )
        for wanted, marker in rules:
            refs = [ref for ref, vs in sorted(wanted.items()) if any(v in text for v in vs)]
            if refs:
                out[entry.seq] = marker.format(refs=", ".join(refs))
                break
    if package is None:
        return out
    if testimonies is None:
        testimonies = testimonies_of(package)
    codes = protected_of(package).unconsented_codes()
    for entry in entries:
        if entry.seq not in out and any(
            f"{a}-{b}".upper() in codes for a, b in _CODE_IN.findall(texts[entry.seq])
        ):
            out[entry.seq] = WITHHELD_PERSON
    outside = outside_records(
        [e for e in entries if e.seq not in out], items, testimonies, redactions
    )
    for seq, what in outside.items():
        out[seq] = WITHHELD_OUTSIDE.format(what=what)
    return out


_CODE_IN = re.compile(r"(?<![a-z0-9])([a-z])-(\d{4,})(?!\d)")
_HEX = re.compile(r"^[0-9a-f]{32,}$")
_PACKAGE_REF = re.compile(r"pkg-\d+")
_BOUND_OF = {
    CUSTODY_TABLE: "custody events",
    TestimonyVersion._meta.db_table: "statement versions",
    ReviewDecision._meta.db_table: "review decisions",
}


class _Records:
    """What belongs to a package: its items and testimonies, and their parts (custody
    events, statement versions, review decisions, files by their hashes)."""

    def __init__(
        self,
        items: Sequence[EvidenceItem],
        testimonies: Sequence[Testimony],
        redactions: dict[int, Redaction],
    ) -> None:
        item_pks = [i.pk for i in items]
        testimony_pks = [t.pk for t in testimonies]
        self.items = {str(pk) for pk in item_pks}
        self.testimonies = {str(pk) for pk in testimony_pks}
        self.refs = {i.reference.casefold() for i in items}
        self.refs |= {testimony_ref(t).casefold() for t in testimonies}
        self.hashes = {i.original.sha256 for i in items}
        for r in redactions.values():
            self.hashes |= {r.sha256, r.original_sha256}
        versions = TestimonyVersion.objects.filter(testimony__in=testimony_pks)
        decisions = ReviewDecision.objects.filter(
            Q(item__in=item_pks) | Q(testimony__in=testimony_pks)
        )
        custody = CustodyEvent.objects.filter(item__in=item_pks)
        self.rows: dict[str, set[str]] = {
            TestimonyVersion._meta.db_table: set(),
            ReviewDecision._meta.db_table: {
                str(pk) for pk in decisions.values_list("pk", flat=True)
            },
            CUSTODY_TABLE: {str(pk) for pk in custody.values_list("pk", flat=True)},
        }
        version_rows = set()
        for pk, sha256 in versions.values_list("pk", "sha256"):
            version_rows.add(str(pk))
            self.hashes.add(sha256)
        self.rows[TestimonyVersion._meta.db_table] = version_rows

    def outside(self, entry: AuditEntry) -> list[str]:
        """What ``entry`` names that is not the package's, in words (sorted)."""
        found = set()
        kind, target = entry.target_type, entry.target_id
        if kind == "evidence.evidenceitem" and target not in self.items:
            found.add("items")
        elif kind == "people.testimony" and target not in self.testimonies:
            found.add("testimonies")
        elif kind == "disclosure.package":
            found.add("another package")
        details = dict(entry.details) if isinstance(entry.details, Mapping) else entry.details
        bound = details.pop("bound", {}) if isinstance(details, dict) else {}
        for table, doc in (bound or {}).items():
            rows = doc.get("rows", {}) if isinstance(doc, Mapping) else {}
            if table not in self.rows or not set(rows) <= self.rows[table]:
                found.add(_BOUND_OF.get(table, "records"))
        for text in _strings(details):
            low = text.casefold()
            for ref in ITEM_REF.findall(text.upper()):
                if ref.casefold() not in self.refs:
                    found.add("items")
            for m in TESTIMONY_REF.finditer(text.upper()):
                if m.group(0).casefold() not in self.refs:
                    found.add("testimonies")
            if _PACKAGE_REF.search(low):
                found.add("another package")
            if _HEX.match(low) and low not in self.hashes:
                found.add("files")
        return sorted(found)


def outside_records(
    entries: Sequence[AuditEntry],
    items: Sequence[EvidenceItem],
    testimonies: Sequence[Testimony],
    redactions: dict[int, Redaction],
) -> dict[int, str]:
    """``{seq: what}`` of the entries whose details (or target) name a record that is not
    the package's: an item or testimony by reference or id, another package, a custody
    event, statement version or review decision bound by their row, a file by its hash,
    or another item's name or path on the medium."""
    if not entries:
        return {}
    records = _Records(items, testimonies, redactions)
    out = {e.seq: records.outside(e) for e in entries}
    # Another item's name or path on the medium, as a whole string of the details.
    strings = {s for e in entries for s in _strings(e.details) if 3 < len(s) <= 1000}
    if strings:
        case_id = entries[0].case_id or 0  # entries of no case are withheld before
        others = EvidenceItem.objects.filter(case_id=case_id).exclude(pk__in=[i.pk for i in items])
        names = set()
        chunk = sorted(strings)
        for at in range(0, len(chunk), 500):
            part = chunk[at : at + 500]
            hits = others.filter(Q(original_path__in=part) | Q(original_filename__in=part))
            for path, name in hits.values_list("original_path", "original_filename"):
                names |= {path, name}
        mine = {i.original_path for i in items} | {i.original_filename for i in items}
        names -= mine
        for e in entries:
            if names & set(_strings(e.details)):
                out[e.seq] = sorted({*out[e.seq], "items"})
    return {seq: ", ".join(what) for seq, what in out.items() if what}


def entry_doc(entry: AuditEntry, withheld: str = "") -> dict:
    """An entry as the excerpt gives it; with ``withheld`` (the reason), its details are
    that reason and ``details_sha256`` their digest, from which its hash is recomputed."""
    doc = {name: plain(getattr(entry, name)) for name in HASHED_FIELDS}
    doc["prev_hash"], doc["hash"] = entry.prev_hash, entry.hash
    if withheld:
        doc["details"], doc["details_sha256"] = withheld, details_sha256(entry.details)
    return doc


class _Tree:
    """Inclusion proofs for many leaves of one tree: each subtree hashed once."""

    def __init__(self, leaves: Sequence[bytes]) -> None:
        self.leaves = leaves
        self.memo: dict[tuple[int, int], bytes] = {}

    def mth(self, lo: int, hi: int) -> bytes:
        key = (lo, hi)
        if key not in self.memo:
            if hi - lo == 1:
                self.memo[key] = checkpoints.leaf_hash(self.leaves[lo])
            else:
                k = 1 << ((hi - lo - 1).bit_length() - 1)
                self.memo[key] = checkpoints.node_hash(self.mth(lo, lo + k), self.mth(lo + k, hi))
        return self.memo[key]

    def proof(self, index: int, size: int) -> list[bytes]:
        path, lo, hi = [], 0, size
        while hi - lo > 1:
            k = 1 << ((hi - lo - 1).bit_length() - 1)
            if index < lo + k:
                path.append(self.mth(lo + k, hi))
                hi = lo + k
            else:
                path.append(self.mth(lo, lo + k))
                lo += k
        return path[::-1]
