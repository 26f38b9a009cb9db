"""Near-duplicate groups: photos whose perceptual hashes are at most ``NEAR_DISTANCE`` bits
apart share a group, kept incrementally against a per-case index of hash bands."""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple, cast

from django.db import transaction
from django.db.models import BigIntegerField, F, OuterRef, Subquery, Value, When
from django.db.models import Case as SqlCase

from casefiles import audit
from casefiles.bulk import insert_rows

from .models import EvidenceItem
from .services.batches import lock_case_intake

if TYPE_CHECKING:
    from django.contrib.auth.base_user import AbstractBaseUser

    from casefiles.models import Case

    from .models import NearIndex

NEAR_DISTANCE = 4
_BANDS = ((0, 13), (13, 26), (26, 39), (39, 52), (52, 64))  # d ≤ 4 ⇒ one band equal
_MASK = (1 << 64) - 1
NEAR_CHUNK = 1000  # new items grouped per transaction: the index's lock is held briefly


def _bands(h: int) -> tuple[int, ...]:
    u = h & _MASK
    return tuple((u >> lo) & ((1 << (hi - lo)) - 1) for lo, hi in _BANDS)


class NearPass(NamedTuple):
    """What one grouping pass did: the new items it placed, the indexed hashes it read
    (those sharing a band with a new one) and the groups it made, grew or merged."""

    items: int
    candidates: int
    groups: int


def group_near_duplicates(case: Case, *, chunk: int = NEAR_CHUNK) -> NearPass:
    """Place the case's images not yet grouped into near-duplicate groups.

    Incremental: only the new items are read, and looked up in the case's index of hash
    bands (NearHash); identical hashes are one entry. A new image near images of two
    groups merges them. Each chunk is its own short transaction under the index's lock
    (NearIndex), not the case's intake lock: intakes go on meanwhile. Safe to run at any
    time and any number of times (an intake in flight is grouped by the next pass)."""
    done = NearPass(0, 0, 0)
    while True:
        # Neither durable nor audited: groups are derived from the items' hashes, a pass
        # changes no evidence, ``regroup_near_duplicates`` (audited) rebuilds them all,
        # and a property test runs passes inside its own transaction to undo them.
        with transaction.atomic():
            step = _group_chunk(case, chunk)
        done = NearPass(*(a + b for a, b in zip(done, step, strict=True)))
        if step.items < chunk:  # the last of them: no pass more just to find none
            return done


def cases_not_fully_grouped() -> list[int]:
    """The cases holding images that no grouping pass has placed yet (its task lost with
    a killed worker, say): checked when workers start (``manage.py resume_batches``)."""
    from django.db.models import Max

    from .models import NearIndex

    marks = dict(NearIndex.objects.values_list("case_id", "through"))
    latest = (
        EvidenceItem.objects.filter(phash__isnull=False)
        .values("case")
        .annotate(last=Max("pk"))
        .values_list("case", "last")
    )
    return sorted(case for case, last in latest if last > marks.get(case, 0))


def regroup_near_duplicates(case: Case, *, actor: AbstractBaseUser | None = None) -> int:
    """Rebuild a case's near-duplicate groups from scratch (``manage.py
    regroup_near_duplicates``); the same groups the incremental passes keep. Returns the
    number of groups.

    Under the case's intake lock too: an intake in flight is waited for and grouped."""
    from .models import NearHash, NearIndex

    with transaction.atomic():  # not durable: see group_near_duplicates
        lock_case_intake(case)
        _lock_near_index(case)
        NearHash.objects.filter(case=case).delete()
        NearIndex.objects.filter(case=case).update(through=0)
        EvidenceItem.objects.filter(case=case, near_group__isnull=False).update(near_group=None)
        while _group_chunk(case, 2000).items:
            pass
        groups = (
            EvidenceItem.objects.filter(case=case, near_group__isnull=False)
            .values("near_group")
            .distinct()
            .count()
        )
        audit.record(actor, "evidence.regroup", case=case, groups=groups)
    return groups


def _lock_near_index(case: Case) -> NearIndex:
    from .models import NearIndex

    state, created = NearIndex.objects.get_or_create(case=case)
    state = NearIndex.objects.select_for_update().get(pk=state.pk)
    if created:  # a case grouped before the index existed: start clean
        EvidenceItem.objects.filter(case=case, near_group__isnull=False).update(near_group=None)
    return state


def _group_chunk(case: Case, limit: int) -> NearPass:
    """Group the next ``limit`` items past the index's mark (inside a transaction).

    Items of a case are inserted under its intake lock, so in the order of their keys:
    an item committed after this pass read has a larger key than any it read."""
    from .models import NearHash

    state = _lock_near_index(case)
    new = list(
        EvidenceItem.objects.filter(case=case, pk__gt=state.through, phash__isnull=False)
        .order_by("pk")
        .values_list("pk", "phash")[:limit]
    )
    if not new:
        return NearPass(0, 0, 0)
    by_hash: dict[int, list[int]] = {}
    for pk, h in cast("list[tuple[int, int]]", new):  # phash__isnull=False above
        by_hash.setdefault(h, []).append(pk)
    indexed = dict(
        NearHash.objects.filter(case=case, phash__in=list(by_hash)).values_list("phash", "group")
    )
    bands = {h: _bands(h) for h in by_hash if h not in indexed}  # the new hashes'
    # The indexed hashes that share a band with a new one: the only ones it can be near.
    candidates: dict[int, tuple[int, ...]] = {}  # hash: (group, its five bands)
    for k in range(len(_BANDS)):
        if values := {b[k] for b in bands.values()}:
            for h, *row in NearHash.objects.filter(case=case, **{f"b{k}__in": values}).values_list(
                "phash", "group", "b0", "b1", "b2", "b3", "b4"
            ):
                candidates[h] = tuple(row)
    parent: dict[int, int] = {}

    def find(x: int) -> int:
        root = x
        while parent.get(root, root) != root:
            root = parent[root]
        while x != root:
            parent[x], x = root, parent.get(x, x)
        return root

    def union(a: int, b: int) -> None:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)

    # Nodes are groups, named by their smallest item: an indexed group by its own name, a
    # new hash by its first item (larger than every indexed item: see the docstring).
    known = {row[0] for row in candidates.values()} | set(indexed.values())
    touched = {indexed[h] for h in by_hash if h in indexed}  # indexed groups joined
    # buckets[k][band value]: (hash, node) of the indexed hashes sharing that band, then
    # of each new hash once it has been looked up (new hashes near each other meet there).
    buckets: list[dict[int, list[tuple[int, int]]]] = [{} for _ in _BANDS]
    for h, (group, *its_bands) in candidates.items():
        for k, v in enumerate(its_bands):
            buckets[k].setdefault(v, []).append((h & _MASK, group))
    for h, hash_bands in bands.items():
        node, u = by_hash[h][0], h & _MASK
        for k, v in enumerate(hash_bands):
            bucket = buckets[k].get(v)
            if bucket:
                for group in [g for m, g in bucket if (u ^ m).bit_count() <= NEAR_DISTANCE]:
                    union(group, node)
                    if group in known:
                        touched.add(group)
        for k, v in enumerate(hash_bands):
            buckets[k].setdefault(v, []).append((u, node))

    # Final groups: {root: (indexed groups in it, new items in it)}.
    merged: dict[int, tuple[set[int], list[int]]] = {}
    for group in touched:
        merged.setdefault(find(group), (set(), []))[0].add(group)
    for h, pks in by_hash.items():
        root = find(indexed[h]) if h in indexed else find(pks[0])
        merged.setdefault(root, (set(), []))[1].extend(pks)
    insert_rows(
        NearHash,
        [
            dict(
                case_id=case.pk,
                phash=h,
                group=find(by_hash[h][0]),
                **{f"b{k}": v for k, v in enumerate(hash_bands)},
            )
            for h, hash_bands in bands.items()
        ],
    )
    renamed: dict[int, list[int]] = {}  # root: the indexed groups merged into it
    for root, (merged_groups, _) in merged.items():
        if gone := [g for g in merged_groups if g != root]:
            renamed[root] = gone
    if renamed:
        NearHash.objects.filter(
            case=case, group__in=[g for gs in renamed.values() for g in gs]
        ).update(group=_by_root(renamed, "group"))
    # An indexed group of one item (that item in no group yet) now has company.
    alone = set(
        EvidenceItem.objects.filter(pk__in=list(touched), near_group__isnull=True).values_list(
            "pk", flat=True
        )
    )
    joining: list[int] = []  # items whose group is now their hash's (two items or more)
    groups = 0
    for merged_groups, pks in merged.values():
        if merged_groups or len(pks) > 1:
            groups += 1
            joining += pks
            joining += merged_groups & alone
    own_group = Subquery(
        NearHash.objects.filter(case=OuterRef("case"), phash=OuterRef("phash")).values("group")[:1]
    )
    if joining:
        EvidenceItem.objects.filter(pk__in=joining).update(near_group=own_group)
    if renamed:
        EvidenceItem.objects.filter(
            case=case, near_group__in=[g for gs in renamed.values() for g in gs]
        ).update(near_group=own_group)
    state.through = new[-1][0]
    state.save(update_fields=["through"])
    return NearPass(len(new), len(candidates.keys() | indexed.keys()), groups)


def _by_root(renamed: dict[int, list[int]], column: str) -> SqlCase:
    return SqlCase(
        *(When(**{f"{column}__in": gs}, then=Value(root)) for root, gs in renamed.items()),
        default=F(column),
        output_field=BigIntegerField(),
    )


def near_groups_from_scratch(rows: list[tuple[int, int]]) -> dict[int, list[int]]:
    """{smallest pk: pks} of each group of two or more near-identical images, from all of
    a case's (pk, phash) at once: what the incremental passes must agree with."""
    parent = {pk: pk for pk, _ in rows}

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for lo, hi in _BANDS:
        buckets: dict[int, list[tuple[int, int]]] = {}
        width = (1 << (hi - lo)) - 1
        for pk, h in rows:
            buckets.setdefault(((h & _MASK) >> lo) & width, []).append((pk, h & _MASK))
        for members in buckets.values():
            for i, (a, ha) in enumerate(members):
                for b, hb in members[i + 1 :]:
                    if (ha ^ hb).bit_count() <= NEAR_DISTANCE:
                        ra, rb = find(a), find(b)
                        if ra != rb:
                            parent[max(ra, rb)] = min(ra, rb)
    groups: dict[int, list[int]] = {}
    for pk, _ in rows:
        groups.setdefault(find(pk), []).append(pk)
    return {root: pks for root, pks in groups.items() if len(pks) > 1}
