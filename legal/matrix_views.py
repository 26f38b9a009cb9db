"""The evidence matrix of a case, its CSV, and the links behind each of its counts."""

from __future__ import annotations

import csv

from django.db.models import Q
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.translation import get_language

from casefiles import audit
from casefiles.access import Action, account_of, can, get_case_for_user
from casefiles.exports import csv_cell

from . import reads
from .matrix import gaps, matrix_of
from .models import Stance


def matrix(request: HttpRequest, ref: str) -> HttpResponse:
    case = get_case_for_user(request.user, ref)
    rows = matrix_of(case)
    audit.record(request.user, "legal.matrix", target=case, case=case)
    return render(
        request,
        "legal/matrix.html",
        {
            "case": case,
            "matrix": rows,
            "gaps": len(gaps(rows)),
            "stances": Stance.choices,
            "language": get_language(),
            "can_export": can(request.user, Action.EXPORT, case),
        },
    )


def matrix_csv(request: HttpRequest, ref: str) -> HttpResponse:
    """The matrix as CSV (audited): one line per element, its counts and whether it is
    a gap. Cells never start a spreadsheet formula."""
    case = get_case_for_user(request.user, ref, Action.EXPORT)
    rows = matrix_of(case)
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{case.reference}-matrix.csv"'
    writer = csv.writer(response)
    header = ["crime", "article", "element", "element_en", "element_ar"]
    for stance in Stance.values:
        header += [f"{stance}_reviewed", f"{stance}_not_reviewed", f"{stance}_items"]
        header += [f"{stance}_testimonies"]
    writer.writerow([*header, "gap"])
    lines = 0
    for group in rows:
        for row in group.rows:
            e = row.element
            values: list[object] = [group.crime.code, group.crime.article, e.code]
            values += [e.label_en, e.label_ar]
            for _stance, cell in row.in_order():
                values += [cell.reviewed, cell.unreviewed, cell.items, cell.testimonies]
            writer.writerow([*(csv_cell(v) for v in values), "yes" if row.gap else "no"])
            lines += 1
    audit.record(account_of(request), "legal.matrix_export", target=case, case=case, rows=lines)
    return response


def element_links(request: HttpRequest, ref: str, element_code: str) -> HttpResponse:
    """The links of one element in this case, filtered as the matrix's count was:
    ``stance``, ``reviewed`` (1 or 0) and ``kind`` (item or testimony)."""
    case = get_case_for_user(request.user, ref)
    element = reads.element_by_code(element_code)
    if element is None:
        raise Http404
    links = (
        reads.links_in(request.user, case)
        .filter(element=element)
        .select_related(
            "author",
            "item",
            "testimony",
            "confirmation__confirmed_by",
            "withdrawal__withdrawn_by",
        )
        .order_by("at", "pk")
    )
    chosen = {k: request.GET.get(k, "") for k in ("stance", "reviewed", "kind", "withdrawn")}
    if chosen["stance"] in Stance.values:
        links = links.filter(stance=chosen["stance"])
    if chosen["reviewed"] in ("0", "1"):
        links = links.filter(confirmation__isnull=chosen["reviewed"] == "0")
    if chosen["kind"] == "item":
        links = links.filter(item__isnull=False)
    elif chosen["kind"] == "testimony":
        links = links.filter(testimony__isnull=False)
    if chosen["withdrawn"] != "1":
        links = links.filter(Q(withdrawal__isnull=True))
    user = account_of(request)
    return render(
        request,
        "legal/element_links.html",
        {
            "case": case,
            "element": element,
            "links": links,
            "chosen": chosen,
            "stances": Stance.choices,
            "language": get_language(),
            "can_review": can(user, Action.REVIEW, case),
            "user_id": user.pk,
        },
    )
