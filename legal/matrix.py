"""The evidence matrix of a case: each legal element, and how many links from items and
testimonies support it, contradict it or give context, reviewed (confirmed by a second
lawyer) or not. An element with no reviewed support is a gap."""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db.models import Count, Q

from casefiles.models import Case

from .models import Crime, ElementLink, LegalElement, Stance


@dataclass
class Cell:
    reviewed: int = 0
    unreviewed: int = 0
    items: int = 0
    testimonies: int = 0

    @property
    def total(self) -> int:
        return self.reviewed + self.unreviewed


@dataclass
class Row:
    element: LegalElement
    cells: dict[str, Cell] = field(default_factory=lambda: {s: Cell() for s in Stance.values})

    @property
    def gap(self) -> bool:
        return self.cells[Stance.SUPPORTS].reviewed == 0

    def in_order(self) -> list[tuple[str, Cell]]:
        return [(stance, self.cells[stance]) for stance in Stance.values]


@dataclass
class CrimeRows:
    crime: Crime
    rows: list[Row]


def matrix_of(case: Case) -> list[CrimeRows]:
    """Every current element (and any retired one this case links), grouped by crime,
    with its counts: two queries, whatever the number of links."""
    counted = (
        ElementLink.objects.filter(case=case, withdrawal__isnull=True)
        .values("element_id", "stance")
        .annotate(
            reviewed=Count("pk", filter=Q(confirmation__isnull=False)),
            unreviewed=Count("pk", filter=Q(confirmation__isnull=True)),
            items=Count("pk", filter=Q(item__isnull=False)),
            testimonies=Count("pk", filter=Q(testimony__isnull=False)),
        )
        .order_by()
    )
    cells: dict[int, dict[str, Cell]] = {}
    for c in counted:
        cells.setdefault(c["element_id"], {})[c["stance"]] = Cell(
            c["reviewed"], c["unreviewed"], c["items"], c["testimonies"]
        )
    elements = (
        LegalElement.objects.filter(
            Q(retired_at__isnull=True, crime__retired_at__isnull=True) | Q(pk__in=list(cells))
        )
        .select_related("crime")
        .order_by("crime__order", "crime__code", "order", "code")
    )
    grouped: list[CrimeRows] = []
    for element in elements:
        row = Row(element)
        row.cells.update(cells.get(element.pk, {}))
        if not grouped or grouped[-1].crime.pk != element.crime_id:
            grouped.append(CrimeRows(element.crime, []))
        grouped[-1].rows.append(row)
    return grouped


def gaps(matrix: list[CrimeRows]) -> list[LegalElement]:
    return [row.element for group in matrix for row in group.rows if row.gap]
