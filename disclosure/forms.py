from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django import forms
from django.utils.translation import gettext_lazy as _

from casefiles.forms import choice_field
from legal.models import LegalElement, SavedSearch
from people.models import ConsentScope

NAME_CHOICES = [("name_ar", _("Name in Arabic")), ("name_latin", _("Name in Latin script"))]
SELECT_CHOICES = [
    ("all", _("Everything in the case")),
    ("chosen", _("These references")),
    ("search", _("A saved search")),
    ("element", _("The evidence supporting a legal element")),
]


class RequestForm(forms.Form):
    recipient = forms.CharField(label=_("Recipient"), max_length=200)
    recipient_reference = forms.CharField(
        label=_("The recipient's case reference"), max_length=200, required=False
    )
    purpose = forms.ChoiceField(label=_("Purpose"), choices=ConsentScope.choices)
    select = forms.ChoiceField(
        label=_("What goes in"), choices=SELECT_CHOICES, widget=forms.RadioSelect, initial="all"
    )
    chosen = forms.CharField(
        label=_("References"),
        required=False,
        max_length=20000,
        help_text=_("EV-000123 for an item, T-0004 for a testimony, separated by commas."),
    )
    search = forms.ChoiceField(label=_("Saved search"), required=False)
    element = forms.ChoiceField(label=_("Legal element"), required=False)
    named_fields = forms.MultipleChoiceField(
        label=_("Ask to give these by name (where consent and protection allow)"),
        choices=NAME_CHOICES,
        required=False,
        widget=forms.CheckboxSelectMultiple,
    )

    def __init__(
        self, *args: Any, searches: list[SavedSearch], language: str | None, **kwargs: Any
    ):
        super().__init__(*args, **kwargs)
        self.searches = {str(s.pk): s for s in searches}
        choice_field(self, "search").choices = [("", "—")] + [
            (pk, s.name) for pk, s in self.searches.items()
        ]
        elements = LegalElement.objects.filter(retired_at__isnull=True).order_by("code")
        self.elements = {e.code: e for e in elements}
        choice_field(self, "element").choices = [("", "—")] + [
            (code, f"{code} · {e.label(language)}") for code, e in self.elements.items()
        ]

    def service_values(self) -> dict[str, Any]:
        data = self.cleaned_data
        select = data["select"]
        values: dict[str, Any] = {
            "recipient": data["recipient"],
            "recipient_reference": data["recipient_reference"],
            "purpose": data["purpose"],
            "named_fields": data["named_fields"],
            "select": select,
        }
        if select == "chosen":
            values["select"] = data["chosen"] or ""
            if not values["select"].strip():
                values["select"] = ","  # refused by the service, with its message
        elif select == "search":
            values["search"] = self.searches.get(data["search"] or "")
        elif select == "element":
            values["element"] = self.elements.get(data["element"] or "")
        return values


class ApproveForm(forms.Form):
    allowed_fields = forms.MultipleChoiceField(
        label=_("Allow these to be given by name"),
        choices=NAME_CHOICES,
        required=False,
        widget=forms.CheckboxSelectMultiple,
    )

    def __init__(self, *args: Any, flagged: Sequence[tuple[str, str, str]] = (), **kwargs: Any):
        """``flagged``: (item reference, field, what the preview says of it) of each whole
        item's field that names a protected person: a box to keep it, and its reason."""
        super().__init__(*args, **kwargs)
        self.flagged = []
        for ref, name, said in dict.fromkeys(flagged):
            keep, why = f"keep-{ref}-{name}", f"why-{ref}-{name}"
            self.fields[keep] = forms.BooleanField(label=_("Keep it"), required=False)
            self.fields[why] = forms.CharField(
                label=_("Why it may go"),
                required=False,
                max_length=500,
                widget=forms.TextInput({"dir": "auto"}),
            )
            self.flagged.append((ref, name, said, keep, why))

    @property
    def kept_rows(self) -> list[tuple[str, Any, Any]]:
        return [(said, self[keep], self[why]) for _r, _n, said, keep, why in self.flagged]

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        for _ref, _name, _said, keep, why in self.flagged:
            if data.get(keep) and not (data.get(why) or "").strip():
                self.add_error(why, _("Say why it may go."))
        return data

    def kept_fields(self) -> dict[str, dict[str, str]]:
        """``{reference: {field: reason}}`` of the fields kept."""
        kept: dict[str, dict[str, str]] = {}
        for ref, name, _said, keep, why in self.flagged:
            if self.cleaned_data.get(keep):
                kept.setdefault(ref, {})[name] = self.cleaned_data[why].strip()
        return kept


class ReasonForm(forms.Form):
    reason = forms.CharField(
        label=_("Reason"), max_length=2000, widget=forms.Textarea({"rows": 3, "dir": "auto"})
    )


class WithdrawForm(forms.Form):
    reason = forms.CharField(
        label=_("Reason"),
        max_length=2000,
        required=False,
        widget=forms.Textarea({"rows": 2, "dir": "auto"}),
    )
