import django_filters
from django.utils.translation import gettext_lazy as _

from casefiles.filters import DateRange

from .models import CaseRole, Person, RoleKind, Testimony


class CaseRoleFilter(django_filters.FilterSet):
    """The people of one case, by role, victim status and protection level."""

    role = django_filters.ChoiceFilter(label=_("Role"), choices=RoleKind.choices)
    victim_status = django_filters.ChoiceFilter(
        label=_("Victim status"),
        field_name="person__victim_status",
        choices=Person.VictimStatus.choices,
    )
    protection_level = django_filters.ChoiceFilter(
        label=_("Protection level"),
        field_name="person__protection_level",
        choices=Person.Protection.choices,
    )

    class Meta:
        model = CaseRole
        fields = ["role", "victim_status", "protection_level"]


class TestimonyFilter(django_filters.FilterSet):
    """The testimonies of one case, by review status, language, mode, witness and date."""

    status = django_filters.ChoiceFilter(label=_("Status"), choices=Testimony.Status.choices)
    language = django_filters.ChoiceFilter(label=_("Language"), choices=Testimony.Language.choices)
    mode = django_filters.ChoiceFilter(label=_("Mode"), choices=Testimony.Mode.choices)
    witness = django_filters.CharFilter(
        label=_("Witness code"), field_name="witness__code", lookup_expr="iexact"
    )
    taken = django_filters.DateFromToRangeFilter(
        label=_("Date taken"), field_name="taken_at", widget=DateRange()
    )

    class Meta:
        model = Testimony
        fields = ["status", "language", "mode", "witness", "taken"]
