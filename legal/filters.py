"""The review workspace's filter: a case's items by review status, grades, legal element
and stance, reviewer, assignment, sensitivity, near-duplicate group, tag and kind.

Each filter is one ``EXISTS`` or an indexed column of the item, so a page of 55,000
items costs one query whatever is chosen. Grades are those of each assessor's latest
assessment (several assessors side by side, never averaged): "B" matches an item some
assessor's latest assessment grades B. Who reviewed an item is who took its last review
decision or any assessor of it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import urlencode

import django_filters
from django.contrib.auth import get_user_model
from django.db.models import Exists, OuterRef, Q, QuerySet, Subquery
from django.utils.translation import get_language
from django.utils.translation import gettext_lazy as _

from casefiles.models import Case
from casefiles.reviewing import ReviewStatus
from evidence.models import EvidenceItem, Tag

from .models import Assessment, ElementLink, LegalElement, ReviewDecision, Stance

# Filters applied together in one subquery each (``filter_queryset``), not one by one.
GRADES = ("reliability", "credibility")
LINKS = ("element", "stance")
# Filters that read what is recorded about an item's content: an item attached to a
# statement the user may not read must not answer them (as the evidence gallery does).
CONTENT_FILTERS = (*GRADES, *LINKS, "reviewer", "near_group", "tag")


def members_of(case: Case) -> QuerySet:
    """Everyone ever a member of ``case`` (a reviewer who left still decided what they
    did), as (pk, username)."""
    return (
        get_user_model()
        .objects.filter(case_memberships__case=case)
        .order_by("username")
        .values_list("pk", "username")
        .distinct()
    )


class WorkspaceFilter(django_filters.FilterSet):
    status = django_filters.ChoiceFilter(
        label=_("Review status"), field_name="review_status", choices=ReviewStatus.choices
    )
    reliability = django_filters.ChoiceFilter(
        label=_("Source reliability"), choices=Assessment.Reliability.choices, method="together"
    )
    credibility = django_filters.ChoiceFilter(
        label=_("Information credibility"),
        choices=Assessment.Credibility.choices,
        method="together",
    )
    element = django_filters.ChoiceFilter(label=_("Legal element"), choices=[], method="together")
    stance = django_filters.ChoiceFilter(
        label=_("Stance"), choices=Stance.choices, method="together"
    )
    reviewer = django_filters.ChoiceFilter(label=_("Reviewed by"), choices=[], method="by_reviewer")
    assigned = django_filters.ChoiceFilter(
        label=_("Assigned to"), choices=[], field_name="assignment__reviewer_id"
    )
    sensitivity = django_filters.ChoiceFilter(
        label=_("Sensitivity"), choices=Case.Sensitivity.choices
    )
    near_group = django_filters.NumberFilter(label=_("Near-duplicate group"), method="by_group")
    tag = django_filters.ChoiceFilter(label=_("Tag"), choices=[], method="by_tag")
    kind = django_filters.ChoiceFilter(label=_("Kind"), choices=EvidenceItem.Kind.choices)

    class Meta:
        model = EvidenceItem
        fields: list[str] = []

    def __init__(
        self,
        *args: Any,
        case: Case,
        elements: Callable[[], list[LegalElement]] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self.case = case
        language = get_language()
        members: list[tuple[str, str]] = []

        def people() -> list[tuple[str, str]]:  # one query for both lists, when asked
            if not members:
                members.extend((str(pk), name) for pk, name in members_of(case))
            return members

        self.filters["reviewer"].extra["choices"] = people
        self.filters["assigned"].extra["choices"] = people

        def catalogue() -> list[tuple[str, str]]:
            found = LegalElement.objects.order_by("crime__order", "crime__code", "order", "code")
            chosen = found if elements is None else elements()
            return [(e.code, f"{e.code} · {e.label(language)}") for e in chosen]

        self.filters["element"].extra["choices"] = catalogue
        tags = Tag.objects.filter(case=case).order_by("name").values_list("name", flat=True)
        self.filters["tag"].extra["choices"] = lambda: [(t, t) for t in tags]

    # Applied in ``filter_queryset``, together with the filters of their group.
    def together(self, queryset: QuerySet, name: str, value: Any) -> QuerySet:
        return queryset

    def filter_queryset(self, queryset: QuerySet) -> QuerySet:
        queryset = super().filter_queryset(queryset)
        chosen = self.form.cleaned_data
        grades = {name: chosen[name] for name in GRADES if chosen.get(name)}
        if grades:
            newer = Assessment.objects.filter(
                item=OuterRef("item"), assessor=OuterRef("assessor"), pk__gt=OuterRef("pk")
            )
            latest = Assessment.objects.filter(item=OuterRef("pk"), **grades).filter(~Exists(newer))
            queryset = queryset.filter(Exists(latest))
        link = {}
        if chosen.get("element"):
            link["element__code"] = chosen["element"]
        if chosen.get("stance"):
            link["stance"] = chosen["stance"]
        if link:
            live = ElementLink.objects.filter(item=OuterRef("pk"), withdrawal__isnull=True, **link)
            queryset = queryset.filter(Exists(live))
        return queryset

    def by_reviewer(self, queryset: QuerySet, name: str, value: str) -> QuerySet:
        """Items whose last decision is the reviewer's, or that they assessed. "Took any
        decision on it" comes first: one set of item keys, cheap to test each item
        against, so the item's last decision is looked up only for those (measured at
        55,000 items: under 50 ms whether the reviewer decided all or none of them)."""
        reviewer = int(value)
        decided = ReviewDecision.objects.filter(item=OuterRef("pk"), actor_id=reviewer)
        last = ReviewDecision.objects.filter(item=OuterRef("pk")).order_by("-pk")
        assessed = Assessment.objects.filter(item=OuterRef("pk"), assessor_id=reviewer)
        return queryset.alias(last_actor=Subquery(last.values("actor_id")[:1])).filter(
            (Exists(decided) & Q(last_actor=reviewer)) | Exists(assessed)
        )

    def by_group(self, queryset: QuerySet, name: str, value: Any) -> QuerySet:
        if value != int(value) or not -(2**63) <= value < 2**63:
            return queryset.none()  # no group has such a number
        return queryset.filter(near_group=int(value))

    def by_tag(self, queryset: QuerySet, name: str, value: str) -> QuerySet:
        tagged = EvidenceItem.tags.through.objects.filter(
            evidenceitem_id=OuterRef("pk"), tag__case=self.case, tag__name=value
        )
        return queryset.filter(Exists(tagged))

    def by_content(self) -> bool:
        """Is a filter on what is recorded about the items' content in use? (After
        validation.)"""
        return any(self.form.cleaned_data.get(name) not in (None, "") for name in CONTENT_FILTERS)

    def query(self) -> str:
        """The valid filters chosen, as a query string in a fixed order (what a saved
        search keeps and a bulk action over "everything it matches" runs on)."""
        values = []
        for name in self.filters:
            value = self.form.cleaned_data.get(name)
            if value in (None, ""):
                continue
            if name == "near_group":
                value = int(value)
            values.append((name, str(value)))
        return urlencode(values)


def dropped(filterset: WorkspaceFilter) -> list[str]:
    """The filters given but refused (their values were not valid): left out, and said."""
    return [str(filterset.filters[name].label) for name in filterset.form.errors]
