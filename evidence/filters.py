import django_filters
from django.utils.translation import gettext_lazy as _

from casefiles.filters import AnyYesNo, DateRange
from people.protection import withheld_testimonies

from .models import EvidenceItem, IntakeBatch


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

    class Meta:
        model = EvidenceItem
        fields = ["kind", "taken", "camera", "batch", "integrity", "flagged", "near_group"]

    # Filters on what a file holds: a withheld item must not answer them (see gallery).
    CONTENT_FILTERS = ("taken", "camera", "near_group")

    def __init__(self, *args, case, user, **kwargs):
        super().__init__(*args, **kwargs)
        batch = self.filters["batch"]
        if not isinstance(batch, django_filters.ModelChoiceFilter):
            raise TypeError("batch is a model choice filter")
        batch.queryset = IntakeBatch.objects.filter(case=case)
        # A camera only a withheld item was taken with is not offered: its name is
        # the metadata of a statement the user may not read.
        cameras = (
            EvidenceItem.objects.filter(case=case)
            .exclude(testimony__in=withheld_testimonies(user, case))
            .exclude(provenance__camera_model="")
            .values_list("provenance__camera_model", flat=True)
            .distinct()
            .order_by("provenance__camera_model")
        )
        self.filters["camera"].extra["choices"] = [(c, c) for c in cameras]

    def by_content(self) -> bool:
        """Is a filter on the files' content (date taken, camera, near-duplicate group)
        in use? Call after validation."""

        def used(value) -> bool:
            if isinstance(value, slice):  # a date range: used when either end is given
                return value.start is not None or value.stop is not None
            return value not in (None, "")

        return any(used(self.form.cleaned_data.get(name)) for name in self.CONTENT_FILTERS)
