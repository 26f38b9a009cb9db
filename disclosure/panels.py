"""What disclosure shows on the case's page: a link to its packages (no query)."""

from __future__ import annotations

from django.template import Context

from casefiles.models import Case
from casefiles.panels import register_panel, render_snippet


def register() -> None:
    register_panel("case_links", case_link, order=40)


def case_link(context: Context, case: Case) -> str:
    return render_snippet(context, "disclosure/snippets/_case_links.html", {"case": case})
