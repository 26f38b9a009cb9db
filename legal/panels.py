"""What legal shows on other apps' pages, as panels of the core (casefiles/panels.py): the
review of an item and of a testimony. Evidence and people never name legal."""

from __future__ import annotations

from typing import Any

from django.template import Context
from django.urls import reverse
from django.utils.translation import get_language

from casefiles.access import Action, can, is_active_account, request_is_system_admin
from casefiles.models import Case
from casefiles.panels import register_panel, render_snippet
from casefiles.reviewing import ReviewStatus
from evidence.models import EvidenceItem
from people.models import Testimony
from people.protection import statement_refusal

from .forms import AssessmentForm, CommentForm, DecisionForm, LinkForm
from .models import Comment
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
    """The matrix, and the latest comments that mention the viewer in this case."""
    user = context["request"].user
    mentions = (
        Comment.objects.visible_to(user)
        .filter(case=case, mentions=user)
        .select_related("author", "item", "testimony__witness")
        .order_by("-at", "-pk")[:10]
        if is_active_account(user)
        else []
    )
    values = {"case": case, "mentions": mentions}
    return render_snippet(context, "legal/snippets/_case_links.html", values)


def item_lawyer(context: Context, item: EvidenceItem, case: Case) -> str:
    args = [case.reference, item.reference]
    urls = [reverse(f"legal:item_{what}", args=args) for what in ("assess", "link", "comment")]
    return _lawyer(context, item, case, *urls)


def testimony_lawyer(context: Context, testimony: Testimony, case: Case) -> str:
    user = context["request"].user
    if statement_refusal(user, testimony.witness, case):
        return ""  # what a withheld statement shows is the statement's
    args = [case.reference, testimony.pk]
    urls = [reverse(f"legal:testimony_{what}", args=args) for what in ("assess", "link", "comment")]
    return _lawyer(context, testimony, case, *urls)


def _lawyer(
    context: Context, record: Reviewed, case: Case, assess_url: str, link_url: str, comment_url: str
) -> str:
    user = context["request"].user
    admin = _is_admin(context)
    reviewer = can(user, Action.REVIEW, case) and not admin
    links = (
        record.links.filter(withdrawal__isnull=True)
        .select_related("element", "author", "confirmation__confirmed_by")
        .order_by("at", "pk")
    )
    language = get_language()
    may_comment = not admin and (
        can(user, Action.REVIEW, case) or can(user, Action.ADD_EVIDENCE, case)
    )
    comments = record.comments.select_related("author").prefetch_related("mentions")
    values: dict[str, Any] = {
        "comments": comments.order_by("at", "pk"),
        "comment_form": CommentForm() if may_comment else None,
        "comment_url": comment_url,
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


def _is_admin(context: Context) -> bool:
    """Whether the viewer is a system admin, asked once per page (each panel needs it)."""
    return request_is_system_admin(context["request"])


def _review(context: Context, record: Reviewed, case: Case, url: str, *, withheld: bool) -> str:
    user = context["request"].user
    targets = (
        allowed_targets(user, record, admin=_is_admin(context)) if is_active_account(user) else []
    )
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
