"""What a package's metadata says, read from the database in a few queries for all its
records at once: each item's row of items.csv / items.json, its custody chain with the
audit entries that bind it, each testimony's approved statement, the audit excerpt with
its checkpoint and inclusion proofs, and the people named or given as pseudonyms."""

from __future__ import annotations

import csv
import io
import json
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
from casefiles.models import AuditCheckpoint, AuditEntry
from evidence.models import CustodyEvent, EvidenceItem
from legal.models import ElementLink, ReviewDecision
from people.models import Person, Testimony, TestimonyVersion

from .contents import Consents, named_fields, testimony_ref
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


def items_of(package: Package) -> list[EvidenceItem]:
    pks = package.contents.get("items", [])
    rows = EvidenceItem.objects.filter(case=package.case, pk__in=pks)
    rows = rows.select_related("original", "provenance", "source_person", "case")
    return list(rows.order_by("pk"))


def testimonies_of(package: Package) -> list[Testimony]:
    pks = package.contents.get("testimonies", [])
    rows = Testimony.objects.filter(case=package.case, pk__in=pks).select_related("witness")
    return list(rows.order_by("pk"))


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


def _redaction_doc(redaction: Redaction | None) -> Any:
    if redaction is None:
        return NOT_REDACTED
    return {
        "sha256": redaction.sha256,
        "size": redaction.size,
        "original_sha256": redaction.original_sha256,
        "regions": redaction.regions,
        "made_by": redaction.made_by.get_username(),
        "made_at": plain(redaction.made_at),
        "reason": redaction.reason,
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
            "redaction": _redaction_doc(redaction),
        }
        if redaction is None:
            row.update(identifying(item))
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
    entries: Sequence[AuditEntry], items: Sequence[EvidenceItem], redactions: dict[int, Redaction]
) -> dict[int, str]:
    """``{seq: marker}`` for each entry whose details name, anywhere in them (keys too,
    case aside), one of the ``withheld_values`` of an item that goes as a redacted copy:
    the intake's entry (each file's path), a restated title, a medium named in a note;
    and for each entry of no case (``WITHHELD_NO_CASE``)."""
    looked_for = {
        item.reference: [v.casefold() for v in withheld_values(item)]
        for item in items
        if item.pk in redactions
    }
    out = {entry.seq: WITHHELD_NO_CASE for entry in entries if entry.case_id is None}
    if not looked_for:
        return out
    for entry in entries:
        text = "\x00".join(_strings(entry.details)).casefold()
        refs = [ref for ref, values in sorted(looked_for.items()) if any(v in text for v in values)]
        if refs and entry.seq not in out:
            out[entry.seq] = WITHHELD_DETAILS.format(refs=", ".join(refs))
    return out


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


def proofs_for(entries: Sequence[AuditEntry], checkpoint: AuditCheckpoint) -> dict[str, dict]:
    leaves = checkpoints.stored_leaves()[: checkpoint.size]
    tree = _Tree(leaves)
    out = {}
    for entry in entries:
        index = entry.seq - 1  # seq counts from 1, with no gap (entries are never deleted)
        out[str(entry.seq)] = {
            "index": index,
            "size": checkpoint.size,
            "proof": [p.hex() for p in tree.proof(index, checkpoint.size)],
        }
    return out
