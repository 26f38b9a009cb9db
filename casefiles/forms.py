from datetime import UTC, datetime, time

from django import forms
from django.utils.translation import gettext_lazy as _

from .access import Role


class AccessRequestForm(forms.Form):
    reference = forms.CharField(label=_("Case reference"), max_length=32)
    reason = forms.CharField(
        label=_("Why you need access"), widget=forms.Textarea(attrs={"rows": 4}), max_length=2000
    )


class DecisionForm(forms.Form):
    # No role chosen in advance: approving is choosing one (the first listed is Lead).
    role = forms.ChoiceField(
        label=_("Role"), choices=[("", _("Choose a role")), *Role.choices], required=False
    )
    expires_on = forms.DateField(
        label=_("Access ends on (UTC, end of day)"),
        required=False,
        widget=forms.DateInput(attrs={"type": "date"}),
    )
    note = forms.CharField(
        label=_("Note"), required=False, widget=forms.Textarea(attrs={"rows": 2})
    )

    def expires_at(self):
        day = self.cleaned_data.get("expires_on")
        return datetime.combine(day, time.max, tzinfo=UTC) if day else None
