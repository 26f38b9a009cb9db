"""What legal shows on other apps' pages, as panels of the core (casefiles/panels.py): the
review of an item and of a testimony. Evidence and people never name legal."""

from __future__ import annotations

from typing import Any

from django.template import Context
from django.urls import reverse
from django.utils.html import format_html
from django.utils.translation import get_language
from django.utils.translation import gettext as _

from casefiles.access import Action, can, is_active_account, is_system_admin
from casefiles.models import Case
from casefiles.panels import register_panel, render_snippet
from casefiles.reviewing import ReviewStatus
from evidence.models import EvidenceItem
from people.models import Testimony
from people.protection import statement_refusal

from .forms import AssessmentForm, DecisionForm, LinkForm
from .services.assessments import latest_assessments
from .services.common import Reviewed
from .services.review import allowed_targets, kind_of, status_of


def register() -> None:
    register_panel("item", item_review, order=10)
    register_panel("item", item_lawyer, order=20)
    register_panel("testimony", testimony_review, order=10)
    register_panel("testimony", testimony_lawyer, order=20)
    register_panel("case_links", case_link, order=30)


def case_link(context: Context, case: Case) -> str:
    workspace = reverse("legal:workspace", args=[case.reference])
    matrix = reverse("legal:matrix", args=[case.reference])
    return format_html(
        '<p><a href="{}">{}</a></p><p><a href="{}">{}</a></p>',
        workspace,
        _("Review workspace"),
        matrix,
        _("Evidence matrix"),
    )


def item_lawyer(context: Context, item: EvidenceItem, case: Case) -> str:
    args = [case.reference, item.reference]
    urls = reverse("legal:item_assess", args=args), reverse("legal:item_link", args=args)
    return _lawyer(context, item, case, *urls)


def testimony_lawyer(context: Context, testimony: Testimony, case: Case) -> str:
    user = context["request"].user
    if statement_refusal(user, testimony.witness, case):
        return ""  # what a withheld statement shows is the statement's
    args = [case.reference, testimony.pk]
    urls = reverse("legal:testimony_assess", args=args), reverse("legal:testimony_link", args=args)
    return _lawyer(context, testimony, case, *urls)


def _lawyer(context: Context, record: Reviewed, case: Case, assess_url: str, link_url: str) -> str:
    user = context["request"].user
    reviewer = can(user, Action.REVIEW, case) and not is_system_admin(user)
    links = (
        record.links.filter(withdrawal__isnull=True)
        .select_related("element", "author", "confirmation__confirmed_by")
        .order_by("at", "pk")
    )
    language = get_language()
    values: dict[str, Any] = {
        "case": case,
        "assessments": latest_assessments(record),
        "links": links,
        "language": language,
        "can_review": reviewer,
        "user_id": user.pk,
        "assess_form": AssessmentForm() if reviewer else None,
        "link_form": LinkForm(language=language) if reviewer else None,
        "assess_url": assess_url,
        "link_url": link_url,
    }
    return render_snippet(context, "legal/snippets/_lawyer.html", values)


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
