"""What disclosure shows on other pages (no query): the case's packages, an item's custody
report."""

from __future__ import annotations

from django.template import Context

from casefiles.models import Case
from casefiles.panels import register_panel, render_snippet
from evidence.models import EvidenceItem


def register() -> None:
    register_panel("case_links", case_link, order=40)
    register_panel("item", item_link, order=90)


def case_link(context: Context, case: Case) -> str:
    return render_snippet(context, "disclosure/snippets/_case_links.html", {"case": case})


def item_link(context: Context, item: EvidenceItem, case: Case) -> str:
    values = {"case": case, "item": item}
    return render_snippet(context, "disclosure/snippets/_item_report.html", values)
