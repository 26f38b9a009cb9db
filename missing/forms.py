"""The missing pages' forms: the shape of what is typed; the services check the rest."""

from __future__ import annotations

from typing import Any

from django import forms
from django.utils.translation import gettext_lazy as _

from casefiles.forms import blank_first
from evidence.models import Identification
from people.models import Person
from places.models import Kind, Place

from .models import Status


class DateInput(forms.DateInput):
    input_type = "date"

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(format="%Y-%m-%d", **kwargs)


class PlaceField(forms.ModelChoiceField):
    def __init__(self, facilities: bool = False, **kwargs: Any) -> None:
        places = Place.objects.select_related("parent").order_by("kind", "code")
        if facilities:
            places = places.filter(kind=Kind.FACILITY)
        super().__init__(queryset=places, **kwargs)

    def label_from_instance(self, obj: Place) -> str:
        return f"{obj} ({obj.parent})" if obj.parent_id else str(obj)


def _text(label: Any, rows: int = 3) -> forms.CharField:
    return forms.CharField(
        label=label,
        required=False,
        max_length=4000,
        widget=forms.Textarea(attrs={"rows": rows, "dir": "auto"}),
    )


class ProfileForm(forms.Form):
    physical = _text(_("Physical description"))
    clothing = _text(_("Clothing when last seen"))
    marks = _text(_("Distinctive marks and injuries"))
    dental = _text(_("Dental notes"), 2)
    last_seen_on = forms.DateField(label=_("Last seen on"), required=False, widget=DateInput())
    last_seen_place = PlaceField(label=_("Last seen where (a place)"), required=False)
    last_seen_text = _text(_("Last seen where, in words"), 2)
    facility = PlaceField(facilities=True, label=_("Facility, if known"), required=False)
    detainee_number = forms.CharField(
        label=_("Detainee or body number, if known"), max_length=100, required=False
    )
    detention_branch = forms.CharField(
        label=_("Detention branch, if known"), max_length=200, required=False
    )
    family_contact = _text(_("Family contact"), 2)


class StatusForm(forms.Form):
    status = forms.ChoiceField(label=_("Status"), choices=Status.choices)
    reason = forms.CharField(label=_("Why"), max_length=500, required=False)


class SessionForm(forms.Form):
    family_member: forms.ModelChoiceField = forms.ModelChoiceField(
        label=_("Family member"), queryset=Person.objects.none()
    )
    facility = PlaceField(facilities=True, label=_("Facility"), required=False)
    number_from = forms.IntegerField(
        label=_("Body number from"), min_value=0, max_value=10**9, required=False
    )
    number_to = forms.IntegerField(
        label=_("Body number to"), min_value=0, max_value=10**9, required=False
    )
    taken_from = forms.DateField(label=_("Taken from"), required=False, widget=DateInput())
    taken_to = forms.DateField(label=_("Taken until"), required=False, widget=DateInput())

    def __init__(self, *args: Any, people: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["family_member"].queryset = people  # type: ignore[attr-defined]

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        low, high = data.get("number_from"), data.get("number_to")
        if low is not None and high is not None and low > high:
            self.add_error("number_to", _("The last number comes after the first."))
        start, end = data.get("taken_from"), data.get("taken_to")
        if start and end and start > end:
            self.add_error("taken_to", _("The window ends after it starts."))
        return data


class IdentifyForm(forms.Form):
    # Neither is chosen in advance: the family member's certainty and what follows for
    # the victim are said, never a default taken.
    confidence = forms.ChoiceField(
        label=_("Confidence"),
        choices=blank_first(Identification.Confidence.choices),
        error_messages={"required": _("Choose how certain the family member is.")},
    )
    status = forms.ChoiceField(
        label=_("The victim's status becomes"),
        choices=blank_first(
            [
                (Status.IDENTIFIED, Status.IDENTIFIED.label),
                (Status.DECEASED, Status.DECEASED.label),
            ]
        ),
        error_messages={"required": _("Choose what the victim's status becomes.")},
    )
    present = forms.CharField(label=_("Who was present"), max_length=500)
    consent = forms.BooleanField(
        label=_("The family member consents to recording this identification")
    )
    notes = forms.CharField(
        label=_("Notes"), required=False, max_length=4000, widget=forms.Textarea(attrs={"rows": 2})
    )
