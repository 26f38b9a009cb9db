from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import django_filters
from django import forms
from django.core.exceptions import EmptyResultSet
from django.db import connections
from django.db.models import QuerySet
from django.utils.translation import gettext_lazy as _

from casefiles.filters import AnyYesNo, DateRange
from casefiles.models import Case
from people.protection import withheld_testimonies

from .models import CustodyEvent, EvidenceItem, IntakeBatch

if TYPE_CHECKING:
    from casefiles.access import User

# The camera models of a case, without reading its items: a walk over the camera index
# from one model to the next (a "loose index scan", one probe per model), each kept when
# an item of the case not withheld has it (a scalar subquery with LIMIT 1: an EXISTS is
# planned as a join over every item). SELECT DISTINCT over the items' provenance read
# every row: 60-90 ms at 100,000 items, on every gallery page.
_CAMERAS = """
WITH RECURSIVE models(name) AS (
    SELECT MIN(camera_model) FROM evidence_provenance WHERE camera_model > ''
    UNION ALL
    SELECT (SELECT MIN(p.camera_model) FROM evidence_provenance p WHERE p.camera_model > name)
    FROM models WHERE name IS NOT NULL
)
SELECT name FROM models
WHERE name IS NOT NULL AND (
    SELECT 1 FROM evidence_provenance p
    JOIN evidence_evidenceitem i ON i.id = p.item_id
    WHERE p.camera_model = models.name AND i.case_id = %s
      AND (i.testimony_id IS NULL OR i.testimony_id NOT IN ({withheld}))
    LIMIT 1
) = 1
ORDER BY name
"""


def cameras_of(case: Case, withheld: QuerySet[Any]) -> list[str]:
    """The camera models of ``case``'s items, leaving out the items attached to the
    ``withheld`` testimonies (a query of their ids), in order: one query."""
    try:
        sql, params = withheld.query.sql_with_params()
    except EmptyResultSet:  # nothing withheld (``.none()``)
        sql, params = "SELECT 0 WHERE 1 = 0", ()
    with connections[withheld.db].cursor() as cursor:
        cursor.execute(_CAMERAS.format(withheld=sql), [case.pk, *params])
        return [name for (name,) in cursor.fetchall()]


# Filters the apps above evidence add to the gallery (places: the nearest town, a
# facility), from their ``AppConfig.ready()``: each maker gives the filters for a case;
# the names of those that read what the files hold are kept from withheld items too.
FilterMaker = Callable[[Case, "User | None"], dict[str, django_filters.Filter]]
_extra_filters: list[tuple[FilterMaker, frozenset[str]]] = []


def register_gallery_filters(make: FilterMaker, *, content: frozenset[str]) -> None:
    if all(known is not make for known, _ in _extra_filters):
        _extra_filters.append((make, content))


class EvidenceFilter(django_filters.FilterSet):
    kind = django_filters.ChoiceFilter(label=_("Kind"), choices=EvidenceItem.Kind.choices)
    taken = django_filters.DateFromToRangeFilter(
        label=_("Date taken"),
        field_name="provenance__taken_date",
        widget=DateRange(),
    )
    camera = django_filters.ChoiceFilter(
        label=_("Camera"), field_name="provenance__camera_model", choices=[]
    )
    batch = django_filters.ModelChoiceFilter(label=_("Intake batch"), queryset=None)
    integrity = django_filters.ChoiceFilter(
        label=_("Integrity"), choices=EvidenceItem.Integrity.choices
    )
    flagged = django_filters.BooleanFilter(
        label=_("Flagged"), field_name="is_flagged", widget=AnyYesNo
    )
    near_group = django_filters.NumberFilter(label=_("Near-duplicate group"))
    # The items behind a day's custody mark on the timeline (intake's own acquisitions
    # are not custody marks there, nor here).
    custody_on = django_filters.DateFilter(
        label=_("Custody event on"),
        method="with_custody_on",
        widget=forms.DateInput(attrs={"type": "date"}),
    )

    class Meta:
        model = EvidenceItem
        fields = [
            "kind",
            "taken",
            "camera",
            "batch",
            "integrity",
            "flagged",
            "near_group",
            "custody_on",
        ]

    # Filters on what a file holds: a withheld item must not answer them (see gallery).
    CONTENT_FILTERS = ("taken", "camera", "near_group")

    def __init__(self, *args, case, user, **kwargs):
        super().__init__(*args, **kwargs)
        self.user = user
        batch = self.filters["batch"]
        if not isinstance(batch, django_filters.ModelChoiceFilter):
            raise TypeError("batch is a model choice filter")
        batch.queryset = IntakeBatch.objects.filter(case=case)
        # A camera only a withheld item was taken with is not offered: its name is
        # the metadata of a statement the user may not read.
        self.filters["camera"].extra["choices"] = [
            (c, c) for c in cameras_of(case, withheld_testimonies(user, case))
        ]
        self.content_filters = set(self.CONTENT_FILTERS)
        for make, content in _extra_filters:
            for name, added in make(case, user).items():
                # As django-filter does for declared filters (unstubbed attributes).
                setattr(added, "model", EvidenceItem)  # noqa: B010
                setattr(added, "parent", self)  # noqa: B010
                self.filters[name] = added
            self.content_filters |= content

    def with_custody_on(self, queryset, name, value):
        events = (
            CustodyEvent.objects.visible_to(self.user)
            .filter(at__date=value)
            .exclude(action=CustodyEvent.Action.ACQUIRED)
        )
        return queryset.filter(pk__in=events.values("item_id"))

    def by_content(self) -> bool:
        """Is a filter on the files' content (date taken, camera, near-duplicate group)
        in use? Call after validation."""

        def used(value) -> bool:
            if isinstance(value, slice):  # a date range: used when either end is given
                return value.start is not None or value.stop is not None
            return value not in (None, "")

        return any(used(self.form.cleaned_data.get(name)) for name in self.content_filters)
