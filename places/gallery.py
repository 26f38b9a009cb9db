"""The gallery's filters by place (evidence's ``register_gallery_filters``): the photo's
nearest town (typed, in any case or accent), or a governorate or facility chosen from
the gazetteer. Both read what the files hold (their GPS positions), so the gallery keeps
withheld items out of their answers."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import django_filters
from django.db.models import QuerySet
from django.utils.translation import gettext_lazy as _

from casefiles.models import Case

from .locating import town_key
from .models import ItemLocation, Kind, Place

if TYPE_CHECKING:
    from casefiles.access import User

CONTENT = frozenset({"town", "place"})


def gallery_filters(case: Case, user: User | None) -> dict[str, django_filters.Filter]:
    def by_town(queryset: QuerySet[Any], name: str, value: str) -> QuerySet[Any]:
        key = town_key(value)
        if not key:
            return queryset
        located = ItemLocation.objects.filter(case=case, town_key=key)
        return queryset.filter(pk__in=located.values("item_id"))

    def by_place(queryset: QuerySet[Any], name: str, value: Place | None) -> QuerySet[Any]:
        if value is None:
            return queryset
        field = "facility" if value.kind == Kind.FACILITY else "governorate"
        located = ItemLocation.objects.filter(case=case, **{field: value})
        return queryset.filter(pk__in=located.values("item_id"))

    return {
        "town": django_filters.CharFilter(label=_("Nearest town"), method=by_town, max_length=200),
        "place": django_filters.ModelChoiceFilter(
            label=_("Governorate or facility"),
            queryset=Place.objects.filter(kind__in=[Kind.GOVERNORATE, Kind.FACILITY]).order_by(
                "kind", "code"
            ),
            method=by_place,
        ),
    }
