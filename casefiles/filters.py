import django_filters
from django import forms
from django.contrib.auth import get_user_model
from django.utils.translation import gettext_lazy as _
from django_filters.widgets import DateRangeWidget

from .audit_actions import declared_actions
from .models import AuditEntry, Case


class DateRange(DateRangeWidget):
    """Two date boxes, each with its own name for screen readers ("from", "to"): the
    filter's one label is tied to the first box only."""

    def __init__(self) -> None:
        super().__init__(attrs={"type": "date"})
        self.widgets[0].attrs["aria-label"] = _("from")
        self.widgets[1].attrs["aria-label"] = _("to")


class AnyYesNo(forms.NullBooleanSelect):
    """Any / Yes / No for a yes-or-no filter: Django's own first choice reads "Unknown",
    as if it were a value of the field rather than no filter at all."""

    def __init__(self, attrs=None):
        super().__init__(attrs)
        # "Any" sends nothing, as the other filters' blank choice does: no filter chosen.
        self.choices = [("", _("Any")), ("true", _("Yes")), ("false", _("No"))]

    def format_value(self, value):
        # A list, as every other select gives: Django's own returns a bare string, which
        # the options are then matched against as a substring, so "" (Any) was taken as
        # chosen in "true" and the page showed Any while filtering by Yes.
        chosen = super().format_value(value)
        return [""] if chosen == "unknown" else [chosen]


class AuditEntryFilter(django_filters.FilterSet):
    actor = django_filters.ModelChoiceFilter(
        label=_("Actor"), queryset=get_user_model().objects.order_by("username")
    )
    action = django_filters.ChoiceFilter(
        label=_("Action"), choices=lambda: sorted(declared_actions().items())
    )
    case = django_filters.ModelChoiceFilter(
        label=_("Case"), queryset=Case.objects.order_by("reference")
    )
    target_type = django_filters.CharFilter(label=_("Object type"), help_text="app.model")
    target_id = django_filters.CharFilter(label=_("Object id"))
    at = django_filters.DateFromToRangeFilter(
        label=_("Date"),
        widget=DateRange(),
    )

    class Meta:
        model = AuditEntry
        fields = ["actor", "action", "case", "target_type", "target_id", "at"]
