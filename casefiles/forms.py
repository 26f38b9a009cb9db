from datetime import UTC, datetime, time
from typing import Any

from django import forms
from django.core.exceptions import ValidationError
from django.utils.translation import gettext_lazy as _

from .access import Role
from .models import Case

# The blank choice every select shows first (Django 6.1's ``BLANK_CHOICE_LABEL``): Django's
# own Arabic catalogue does not have it yet. Marked here so that ours carries it.
BLANK_CHOICE_LABEL = _("- Select an option -")


def blank_first(choices: Any) -> list[tuple[str, Any]]:
    """``choices`` after a blank one, which a required field refuses: nothing is chosen
    for the user in advance (a confidence, an outcome, an action)."""
    return [("", BLANK_CHOICE_LABEL), *choices]


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


class CaseForm(forms.ModelForm):
    """A new case, as an admin opens it: what identifies it, not its content."""

    class Meta:
        model = Case
        fields = ["reference", "title", "status", "sensitivity", "jurisdiction"]

    def clean_reference(self):
        return self.cleaned_data["reference"].strip().upper()


class GrantForm(forms.Form):
    username = forms.CharField(label=_("Username"), max_length=150)
    role = forms.ChoiceField(label=_("Role"), choices=[("", _("Choose a role")), *Role.choices])
    expires_on = forms.DateField(
        label=_("Access ends on (UTC, end of day)"),
        required=False,
        widget=forms.DateInput(attrs={"type": "date"}),
    )
    note = forms.CharField(
        label=_("Why (for the admin who approves, if one must)"),
        required=False,
        max_length=2000,
        widget=forms.Textarea(attrs={"rows": 2}),
    )

    def clean_username(self):
        from django.contrib.auth import get_user_model

        name = self.cleaned_data["username"].strip()
        user = get_user_model().objects.filter(username=name, is_active=True).first()
        if user is None:
            raise forms.ValidationError(_("No active account has this username."))
        self.user = user
        return name

    def expires_at(self):
        day = self.cleaned_data.get("expires_on")
        return datetime.combine(day, time.max, tzinfo=UTC) if day else None


class MembershipChangeForm(forms.Form):
    role = forms.ChoiceField(label=_("Role"), choices=Role.choices)
    expires_on = forms.DateField(
        label=_("Access ends on (UTC, end of day)"),
        required=False,
        widget=forms.DateInput(attrs={"type": "date"}),
    )

    def expires_at(self, current=None):
        day = self.cleaned_data.get("expires_on")
        if current is not None and day == current.astimezone(UTC).date():
            return current  # the day shown, unchanged: keep the exact time
        return datetime.combine(day, time.max, tzinfo=UTC) if day else None


def choice_field(form: forms.BaseForm, name: str) -> forms.ChoiceField:
    """``form.fields[name]`` as the choice field it is, to give it its choices for this
    request (``fields`` is typed as holding plain ``Field``s)."""
    field = form.fields[name]
    if not isinstance(field, forms.ChoiceField):
        raise TypeError(f"{name} is not a choice field")
    return field


def model_choice_field(form: forms.BaseForm, name: str) -> forms.ModelChoiceField:
    """``form.fields[name]`` as the model choice field it is, to give it its queryset."""
    field = form.fields[name]
    if not isinstance(field, forms.ModelChoiceField):
        raise TypeError(f"{name} is not a model choice field")
    return field


def form_errors(form: forms.BaseForm, exc: ValidationError) -> None:
    """A service's refusal shown on the form that asked for it: an error about a field
    beside that field, anything else above the form (what was typed is kept)."""
    if hasattr(exc, "error_dict"):
        for name, errors in exc.error_dict.items():
            form.add_error(name if name in form.fields else None, errors)
    else:
        form.add_error(None, exc)
