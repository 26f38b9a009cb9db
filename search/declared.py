"""The kinds of the apps below search: evidence items, testimonies, people, legal links.

Each is one ``register(Kind(...))``: how its rows read as documents, which audited writes
change them, where a result links to, whether a statement guards it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Iterator
from typing import TYPE_CHECKING, Any

from django.db.models import Model, OuterRef, QuerySet, Subquery
from django.urls import reverse
from django.utils.translation import gettext_lazy as _

from evidence.models import EvidenceItem
from legal.models import ElementLink
from people.models import CaseRole, RoleKind, Testimony, TestimonyVersion

from .index import CHUNK
from .kinds import Document, Kind, register, target_of

if TYPE_CHECKING:
    from casefiles.models import AuditEntry

    from .models import Entry


def _batches(
    qs: QuerySet[Any], keys: Collection[str] | None, key_field: str = "pk"
) -> Iterator[list[Any]]:
    """The rows of ``qs`` (of ``keys``, or all), a chunk at a time, by key."""
    if keys is not None:
        keys = sorted(keys)
        for start in range(0, len(keys), CHUNK):
            yield list(qs.filter(**{f"{key_field}__in": keys[start : start + CHUNK]}))
        return
    last = None
    while True:
        page = qs.order_by(key_field)
        if last is not None:
            page = page.filter(**{f"{key_field}__gt": last})
        rows = list(page[:CHUNK])
        if not rows:
            return
        last = rows[-1][key_field] if isinstance(rows[-1], dict) else rows[-1]
        if len(rows) == CHUNK and key_field != "pk":
            # A key several rows share (a person's roles): all of the last key's rows go in
            # this chunk, or those past the cut would be skipped by ``__gt`` next time.
            rows = [r for r in rows if r[key_field] != last]
            rows += list(qs.filter(**{key_field: last}))
        yield rows


def _in_case(qs: QuerySet[Any], case_id: int | None, field: str = "case_id") -> QuerySet[Any]:
    return qs if case_id is None else qs.filter(**{field: case_id})


def _references(model: type[Model], nested: bool) -> Any:
    """The records an entry's ``items`` detail names by reference (intake writes
    [reference, sha256, path] per item, bulk actions the reference alone)."""

    def keys(entry: AuditEntry) -> list[str]:
        named = entry.details.get("items") or []
        refs = [row[0] if nested else row for row in named if row]
        if not refs or entry.case_id is None:
            return []
        pks = model._default_manager.filter(case_id=entry.case_id, reference__in=refs)
        return [str(pk) for pk in pks.values_list("pk", flat=True)]

    return keys


# -- evidence items ------------------------------------------------------------------------


def _item_documents(keys: Collection[str] | None, case_id: int | None) -> Iterator[Document]:
    qs = _in_case(EvidenceItem.objects.all(), case_id).values(
        "pk",
        "case_id",
        "reference",
        "title",
        "description",
        "original_filename",
        "claimed_place",
        "testimony_id",
        "created_at",
        "provenance__camera_make",
        "provenance__camera_model",
        "provenance__acquired_from",
    )
    for rows in _batches(qs, keys):
        tags: dict[int, list[str]] = defaultdict(list)
        through = EvidenceItem.tags.through.objects.filter(
            evidenceitem_id__in=[r["pk"] for r in rows]
        ).values_list("evidenceitem_id", "tag__name")
        for item_id, name in through:
            tags[item_id].append(name)
        for r in rows:
            camera = " ".join(
                filter(None, (r["provenance__camera_make"], r["provenance__camera_model"]))
            )
            yield Document(
                case_id=r["case_id"],
                key=str(r["pk"]),
                reference=r["reference"],
                title=r["title"] or r["original_filename"],
                body=r["description"],
                extra="\n".join(
                    [r["original_filename"], r["provenance__acquired_from"] or "", *tags[r["pk"]]]
                ),
                short=(r["original_filename"], camera, r["claimed_place"], *tags[r["pk"]]),
                guard=r["testimony_id"],
                at=r["created_at"],
            )


def _item_url(entry: Entry) -> str:
    return reverse("evidence:item_detail", args=[entry.case.reference, entry.reference])


ITEMS = register(
    Kind(
        name="item",
        label=_("Evidence"),
        documents=_item_documents,
        url=_item_url,
        follows={
            "evidence.intake": _references(EvidenceItem, nested=True),
            "evidence.update": target_of("evidence.evidenceitem"),
            "legal.bulk_tag_add": _references(EvidenceItem, nested=False),
            "legal.bulk_tag_remove": _references(EvidenceItem, nested=False),
        },
        guarded=True,
    )
)


# -- testimonies ---------------------------------------------------------------------------


def _testimony_documents(keys: Collection[str] | None, case_id: int | None) -> Iterator[Document]:
    latest = TestimonyVersion.objects.filter(testimony=OuterRef("pk")).order_by("-number")
    qs = (
        _in_case(Testimony.objects.all(), case_id)
        .annotate(text=Subquery(latest.values("text")[:1]))
        .values("pk", "case_id", "witness__code", "place", "interpreter", "taken_at", "text")
    )
    for rows in _batches(qs, keys):
        for r in rows:
            yield Document(
                case_id=r["case_id"],
                key=str(r["pk"]),
                reference=f"T-{r['pk']:04d}",
                title=" · ".join(filter(None, (r["witness__code"], r["place"]))),
                body=r["text"] or "",
                extra=r["interpreter"],
                short=(r["witness__code"], r["place"]),
                guard=r["pk"],
                at=r["taken_at"],
            )


def _testimony_url(entry: Entry) -> str:
    return reverse("people:testimony_detail", args=[entry.case.reference, int(entry.key)])


TESTIMONIES = register(
    Kind(
        name="testimony",
        label=_("Testimonies"),
        documents=_testimony_documents,
        url=_testimony_url,
        follows={
            "testimony.create": target_of("people.testimony"),
            "testimony.revise": target_of("people.testimony"),
        },
        guarded=True,
    )
)


# -- people (their codes and what is not protected; names: search.names_index) ---------------


def _people_documents(keys: Collection[str] | None, case_id: int | None) -> Iterator[Document]:
    qs = _in_case(CaseRole.objects.all(), case_id).values(
        "person_id",
        "case_id",
        "role",
        "person__code",
        "person__last_seen_place",
        "person__created_at",
    )
    labels = dict(RoleKind.choices)
    for rows in _batches(qs.order_by("person_id", "case_id"), keys, "person_id"):
        seen: dict[tuple[str, int], list[dict[str, Any]]] = defaultdict(list)
        for r in rows:
            seen[(str(r["person_id"]), r["case_id"])].append(r)
        for (key, case), roles in seen.items():
            r = roles[0]
            yield Document(
                case_id=case,
                key=key,
                reference=r["person__code"],
                title=" · ".join(
                    [r["person__code"], *(str(labels.get(x["role"], "")) for x in roles)]
                ),
                # What stays in the clear only: a victim's detainee number and detention
                # branch are sealed in their profile, never indexed (decision 0023).
                body=r["person__last_seen_place"],
                at=r["person__created_at"],
            )


def _person_url(entry: Entry) -> str:
    return reverse("people:person_detail", args=[entry.case.reference, entry.reference])


PEOPLE = register(
    Kind(
        name="person",
        label=_("People"),
        documents=_people_documents,
        url=_person_url,
        follows={
            "people.register": target_of("people.person"),
            "people.add_role": target_of("people.person"),
        },
    )
)


# -- legal links ---------------------------------------------------------------------------


def _link_documents(keys: Collection[str] | None, case_id: int | None) -> Iterator[Document]:
    qs = _in_case(ElementLink.objects.filter(withdrawal__isnull=True), case_id).values(
        "pk",
        "case_id",
        "element__code",
        "element__label_en",
        "element__label_ar",
        "proposition",
        "item__reference",
        "item__testimony_id",
        "testimony_id",
        "at",
    )
    for rows in _batches(qs, keys):
        for r in rows:
            on = r["item__reference"] or f"T-{r['testimony_id']:04d}"
            yield Document(
                case_id=r["case_id"],
                key=str(r["pk"]),
                reference=on,
                title=f"{r['element__code']} · {r['element__label_en']}",
                body=r["proposition"],
                extra=r["element__label_ar"],
                short=(r["element__code"],),
                guard=r["testimony_id"] or r["item__testimony_id"],
                at=r["at"],
            )


def _link_url(entry: Entry) -> str:
    if entry.reference.startswith("T-"):
        return reverse(
            "people:testimony_detail", args=[entry.case.reference, int(entry.reference[2:])]
        )
    return reverse("evidence:item_detail", args=[entry.case.reference, entry.reference])


def _bulk_links(entry: AuditEntry) -> list[str]:
    items = _references(EvidenceItem, nested=False)(entry)
    links = ElementLink.objects.filter(item_id__in=[int(k) for k in items])
    return [str(pk) for pk in links.values_list("pk", flat=True)]


LINKS = register(
    Kind(
        name="link",
        label=_("Legal links"),
        documents=_link_documents,
        url=_link_url,
        follows={
            "legal.link": target_of("legal.elementlink"),
            "legal.link_confirm": target_of("legal.elementlink"),
            "legal.link_withdraw": target_of("legal.elementlink"),
            "legal.bulk_link": _bulk_links,
        },
        guarded=True,
    )
)
