"""The gallery's filters by place (evidence's ``register_gallery_filters``): the photo's
nearest town (typed, in any case or accent), or a place chosen from the gazetteer, of
any kind (the photos in it or anywhere within it: ``ItemLocationQuerySet.within``).
Both read what the files hold (their GPS positions), so the gallery keeps withheld
items out of their answers."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import django_filters
from django.db.models import QuerySet
from django.utils.translation import gettext_lazy as _
from django_filters import fields

from casefiles.models import Case

from .models import ItemLocation, Place, town_key

if TYPE_CHECKING:
    from casefiles.access import User

CONTENT = frozenset({"town", "place"})


class PlaceChoiceField(fields.ModelChoiceField):
    def label_from_instance(self, obj: Place) -> str:
        # Two towns may share a name: each is shown with the place it sits within.
        return f"{obj} ({obj.parent})" if obj.parent_id else str(obj)


class PlaceChoiceFilter(django_filters.ModelChoiceFilter):
    field_class = PlaceChoiceField


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
        located = ItemLocation.objects.filter(case=case).within(value)
        return queryset.filter(pk__in=located.values("item_id"))

    return {
        "town": django_filters.CharFilter(label=_("Nearest town"), method=by_town, max_length=200),
        "place": PlaceChoiceFilter(
            label=_("Where (or within)"),
            queryset=Place.objects.select_related("parent").order_by("kind", "code"),
            method=by_place,
        ),
    }
