from __future__ import annotations

from typing import Any

import django_filters
from django.db.models import Q, QuerySet
from django.utils.translation import gettext_lazy as _

from casefiles.filters import DateRange
from places.models import Place
from vocabularies.models import Scheme, Term

from .models import Act, Incident

PLACE_DEPTH = 4  # a facility sits at most four places below a country


class IncidentFilter(django_filters.FilterSet):
    """The incidents of one case: by when (an incident whose dates overlap the range),
    where (a place or anywhere within it), act type and victim."""

    when = django_filters.DateFromToRangeFilter(
        label=_("When"), method="overlapping", widget=DateRange()
    )
    place = django_filters.ModelChoiceFilter(
        label=_("Where (or within)"),
        queryset=Place.objects.order_by("kind", "code"),
        method="within",
    )
    act_type = django_filters.ModelChoiceFilter(
        label=_("Act"),
        queryset=Term.objects.filter(scheme=Scheme.ACT_TYPE),
        method="with_act",
    )
    victim = django_filters.CharFilter(label=_("Victim code"), method="with_victim", max_length=16)

    class Meta:
        model = Incident
        fields = ["when", "place", "act_type", "victim"]

    def overlapping(self, queryset: QuerySet[Incident], name: str, value: Any) -> QuerySet:
        if value is None:
            return queryset
        if value.start is not None:
            queryset = queryset.filter(ends_on__gte=value.start.date())
        if value.stop is not None:
            queryset = queryset.filter(starts_on__lte=value.stop.date())
        return queryset

    def within(self, queryset: QuerySet[Incident], name: str, value: Place) -> QuerySet:
        around = Q(place=value)
        for depth in range(1, PLACE_DEPTH + 1):
            around |= Q(**{"place" + "__parent" * depth: value})
        return queryset.filter(around)

    def with_act(self, queryset: QuerySet[Incident], name: str, value: Term) -> QuerySet:
        return queryset.filter(pk__in=Act.objects.filter(act_type=value).values("incident_id"))

    def with_victim(self, queryset: QuerySet[Incident], name: str, value: str) -> QuerySet:
        code = value.strip()
        if not code:
            return queryset
        acts = Act.objects.filter(victim__code__iexact=code)
        return queryset.filter(pk__in=acts.values("incident_id"))
