from __future__ import annotations

import django_filters
from django.db.models import QuerySet
from django.utils.translation import gettext_lazy as _

from search.normalise import normalise

from .models import Kind, Place


class PlaceFilter(django_filters.FilterSet):
    """Places by any of their names, in either script, and by kind."""

    q = django_filters.CharFilter(label=_("Name"), method="named", max_length=200)
    kind = django_filters.ChoiceFilter(label=_("Kind"), choices=Kind.choices)

    class Meta:
        model = Place
        fields = ["q", "kind"]

    def named(self, queryset: QuerySet[Place], name: str, value: str) -> QuerySet[Place]:
        wanted = normalise(value).replace("|", " ").strip()
        return queryset.filter(search_text__contains=wanted) if wanted else queryset
