import django_filters
from django.utils.translation import gettext_lazy as _

from .models import CaseRole, Person, RoleKind


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
