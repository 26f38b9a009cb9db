"""What legal shows on other apps' pages, as panels of the core (casefiles/panels.py): the
review of an item and of a testimony. Evidence and people never name legal."""

from __future__ import annotations

from typing import Any

from django.template import Context
from django.urls import reverse

from casefiles.access import is_active_account
from casefiles.models import Case
from casefiles.panels import register_panel, render_snippet
from casefiles.reviewing import ReviewStatus
from evidence.models import EvidenceItem
from people.models import Testimony
from people.protection import statement_refusal

from .forms import DecisionForm
from .services.review import Reviewed, allowed_targets, kind_of, status_of


def register() -> None:
    register_panel("item", item_review, order=10)
    register_panel("testimony", testimony_review, order=10)


def item_review(context: Context, item: EvidenceItem, case: Case) -> str:
    url = reverse("legal:item_review", args=[case.reference, item.reference])
    return _review(context, item, case, url, withheld=False)


def testimony_review(context: Context, testimony: Testimony, case: Case) -> str:
    url = reverse("legal:testimony_review", args=[case.reference, testimony.pk])
    user = context["request"].user
    withheld = bool(statement_refusal(user, testimony.witness, case))
    return _review(context, testimony, case, url, withheld=withheld)


def _review(context: Context, record: Reviewed, case: Case, url: str, *, withheld: bool) -> str:
    user = context["request"].user
    targets = allowed_targets(user, record) if is_active_account(user) else []
    values: dict[str, Any] = {
        "case": case,
        "record": record,
        "kind": kind_of(record),
        "status": status_of(record),
        "status_label": ReviewStatus(status_of(record)).label,
        "decisions": record.decisions.select_related("actor").order_by("at", "pk"),
        "form": DecisionForm(source=status_of(record), targets=targets) if targets else None,
        "action": url,
        "withheld": withheld,  # a protected statement's review comments are the statement's
    }
    return render_snippet(context, "legal/snippets/_review.html", values)
