"""A package's audit excerpt: the entries that concern its records (about them, or
binding their custody events), each as recorded, and the rules by which an entry's
details go by their digest alone (decisions 0019 and 0029): they would name what the
package withholds, a protected person, or records that are not the package's."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from django.db.models import Q

from casefiles.audit import HASHED_FIELDS, details_sha256
from casefiles.models import AuditEntry
from evidence.models import CustodyEvent, EvidenceItem
from legal.models import ReviewDecision
from people.models import Testimony, TestimonyVersion

from .contents import ITEM_REF, TESTIMONY_REF, testimony_ref
from .exporting import (
    CUSTODY_TABLE,
    _package_of,
    plain,
    protected_of,
    shielded_values,
    shields,
    testimonies_of,
    withheld_values,
)
from .models import Package, Redaction

if TYPE_CHECKING:
    from casefiles.models import Case

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
# A whole item's field that names a protected person (``protected.Protected``), by name or

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
