import django_filters
from django.utils.translation import gettext_lazy as _

from casefiles.filters import AnyYesNo

from .models import EvidenceItem, IntakeBatch


class EvidenceFilter(django_filters.FilterSet):
    kind = django_filters.ChoiceFilter(label=_("Kind"), choices=EvidenceItem.Kind.choices)
    taken = django_filters.DateFromToRangeFilter(
        label=_("Date taken"),
        field_name="provenance__taken_date",
        widget=django_filters.widgets.DateRangeWidget(attrs={"type": "date"}),
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

    def __init__(self, *args, case, **kwargs):
        super().__init__(*args, **kwargs)
        self.filters["batch"].queryset = IntakeBatch.objects.filter(case=case)
        cameras = (
            EvidenceItem.objects.filter(case=case)
            .exclude(provenance__camera_model="")
            .values_list("provenance__camera_model", flat=True)
            .distinct()
            .order_by("provenance__camera_model")
        )
        self.filters["camera"].extra["choices"] = [(c, c) for c in cameras]
