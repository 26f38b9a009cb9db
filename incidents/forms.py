"""The incident pages' forms. They check the shape of what is typed; the services check
the rest (a person of the case, a current term, a record of the case) and their errors
come back onto the same form, with what was typed kept."""

from __future__ import annotations

from typing import Any

from django import forms
from django.db.models import QuerySet
from django.utils.translation import gettext_lazy as _

from people.models import Person
from places.models import Place
from vocabularies.forms import TermField
from vocabularies.models import Scheme

from .models import Precision


class DateInput(forms.DateInput):
    input_type = "date"

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(format="%Y-%m-%d", **kwargs)


class PlaceField(forms.ModelChoiceField):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__(
            queryset=Place.objects.select_related("parent").order_by("kind", "code"), **kwargs
        )

    def label_from_instance(self, obj: Place) -> str:
        return f"{obj} ({obj.parent})" if obj.parent_id else str(obj)


class IncidentForm(forms.Form):
    title_en = forms.CharField(label=_("Title in English"), max_length=300, required=False)
    title_ar = forms.CharField(
        label=_("Title in Arabic"),
        max_length=300,
        required=False,
        widget=forms.TextInput(attrs={"dir": "rtl", "lang": "ar"}),
    )
    description_en = forms.CharField(
        label=_("Description in English"), required=False, widget=forms.Textarea(attrs={"rows": 5})
    )
    description_ar = forms.CharField(
        label=_("Description in Arabic"),
        required=False,
        widget=forms.Textarea(attrs={"rows": 5, "dir": "rtl", "lang": "ar"}),
    )
    precision = forms.ChoiceField(
        label=_("How precise the date is"),
        choices=[("", "—"), *Precision.choices],
        required=False,
    )
    starts_on = forms.DateField(
        label=_("Date (the first day of a range)"), required=False, widget=DateInput()
    )
    ends_on = forms.DateField(label=_("Last day of a range"), required=False, widget=DateInput())
    place = PlaceField(label=_("Where"), required=False)
    expected_version = forms.IntegerField(required=False, widget=forms.HiddenInput())

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if not (data.get("title_en") or "").strip() and not (data.get("title_ar") or "").strip():
            raise forms.ValidationError(_("Give the incident a title in Arabic or in English."))
        return data


class PersonField(forms.ModelChoiceField):
    def label_from_instance(self, obj: Person) -> str:
        return obj.code  # a pseudonym, never a name


class ActForm(forms.Form):
    victim = PersonField(label=_("Victim"), queryset=Person.objects.none())
    act_type = TermField(Scheme.ACT_TYPE, label=_("Act"))
    method = TermField(Scheme.METHOD, label=_("Method"), required=False)
    unit = TermField(Scheme.PERPETRATOR_TYPE, label=_("Perpetrator: a unit"), required=False)
    perpetrator = PersonField(
        label=_("or a person of the case"), queryset=Person.objects.none(), required=False
    )
    involvement = TermField(Scheme.INVOLVEMENT, label=_("Degree of involvement"), required=False)

    def __init__(self, *args: Any, people: QuerySet[Person], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for name in ("victim", "perpetrator"):
            self.fields[name].queryset = people  # type: ignore[attr-defined]


class PerpetratorForm(forms.Form):
    unit = TermField(Scheme.PERPETRATOR_TYPE, label=_("A unit"), required=False)
    person = PersonField(
        label=_("or a person of the case"), queryset=Person.objects.none(), required=False
    )
    involvement = TermField(Scheme.INVOLVEMENT, label=_("Degree of involvement"))

    def __init__(self, *args: Any, people: QuerySet[Person], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["person"].queryset = people  # type: ignore[attr-defined]


class LinkForm(forms.Form):
    record = forms.CharField(
        label=_("Record"),
        max_length=60,
        help_text=_(
            "An evidence item's reference (EV-000123), a testimony (T-0001) or a legal "
            "element's code (RS-7-1-f.1)."
        ),
    )


class TimelineForm(forms.Form):
    """What the timeline shows: kinds of mark, a place, a person by code."""

    kinds = forms.MultipleChoiceField(
        label=_("Show"),
        required=False,
        widget=forms.CheckboxSelectMultiple,
        choices=[
            ("incident", _("Incidents")),
            ("photo", _("Photos (date taken)")),
            ("testimony", _("Testimonies")),
            ("custody", _("Custody events")),
        ],
    )
    place = PlaceField(label=_("Where (or within)"), required=False)
    person = forms.CharField(label=_("Person code"), required=False, max_length=16)
