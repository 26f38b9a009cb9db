import re
from typing import Any

from django import forms
from django.contrib.auth import get_user_model
from django.utils.translation import gettext_lazy as _

from casefiles.access import active_membership_q
from casefiles.forms import choice_field, model_choice_field

from .models import (
    Consent,
    ConsentScope,
    Identity,
    Person,
    Relation,
    RoleKind,
    Testimony,
    parts_json,
)
from .protection import testimony_refusal

_PARTIAL_DATE = re.compile(r"^\d{4}(-\d{2}(-\d{2})?)?$")
_TEXT = {"dir": "auto"}


def _text(label, **kwargs):
    return forms.CharField(label=label, required=False, widget=forms.TextInput(_TEXT), **kwargs)


def _area(label, rows=3, **kwargs):
    return forms.CharField(
        label=label,
        required=False,
        strip=False,
        widget=forms.Textarea({**_TEXT, "rows": rows}),
        **kwargs,
    )


PART_LABELS = {
    "given_ar": _("Given name, Arabic script"),
    "given_latin": _("Given name, Latin script"),
    "father_ar": _("Father's name, Arabic script"),
    "father_latin": _("Father's name, Latin script"),
    "grandfather_ar": _("Grandfather's name, Arabic script"),
    "grandfather_latin": _("Grandfather's name, Latin script"),
    "family_ar": _("Family name or nisba, Arabic script"),
    "family_latin": _("Family name or nisba, Latin script"),
    "laqab_ar": _("Laqab, Arabic script"),
    "laqab_latin": _("Laqab, Latin script"),
    "kunya_ar": _("Kunya (Abu / Umm ...), Arabic script"),
    "kunya_latin": _("Kunya (Abu / Umm ...), Latin script"),
}


class NamePartsForm(forms.Form):
    """The name in parts, in both scripts (``people.models.NAME_PARTS``)."""

    given_ar = _text(PART_LABELS["given_ar"], max_length=150)
    given_latin = _text(PART_LABELS["given_latin"], max_length=150)
    father_ar = _text(PART_LABELS["father_ar"], max_length=150)
    father_latin = _text(PART_LABELS["father_latin"], max_length=150)
    grandfather_ar = _text(PART_LABELS["grandfather_ar"], max_length=150)
    grandfather_latin = _text(PART_LABELS["grandfather_latin"], max_length=150)
    family_ar = _text(PART_LABELS["family_ar"], max_length=150)
    family_latin = _text(PART_LABELS["family_latin"], max_length=150)
    laqab_ar = _text(PART_LABELS["laqab_ar"], max_length=150)
    laqab_latin = _text(PART_LABELS["laqab_latin"], max_length=150)
    kunya_ar = _text(PART_LABELS["kunya_ar"], max_length=150)
    kunya_latin = _text(PART_LABELS["kunya_latin"], max_length=150)


class NamesForm(NamePartsForm):
    """A person's names: full names, aliases and the name in parts, in both scripts."""

    field_order = ("name_ar", "name_latin", "aliases")
    name_ar = _text(_("Full name in Arabic script"), max_length=300)
    name_latin = _text(_("Full name in Latin script"), max_length=300)
    aliases = _area(_("Aliases (one per line)"), rows=2)

    def clean(self):
        data = super().clean() or {}
        if not (data.get("name_ar", "").strip() or data.get("name_latin", "").strip()):
            raise forms.ValidationError(_("Give the name in Arabic or in Latin script."))
        return data

    def parts(self) -> dict[str, str]:
        return {n: self.cleaned_data[n] for n in PART_LABELS}

    @classmethod
    def initial_from(cls, identity: Identity) -> dict[str, str]:
        return {
            "name_ar": identity.name_ar,
            "name_latin": identity.name_latin,
            "aliases": identity.aliases,
            **identity.parts(),
        }


class PersonForm(NamePartsForm):
    field_order = ("role", "name_ar", "name_latin", "aliases", *PART_LABELS)
    role = forms.ChoiceField(label=_("Role in this case"), choices=RoleKind.choices)
    name_ar = _text(_("Full name in Arabic script"), max_length=300)
    name_latin = _text(_("Full name in Latin script"), max_length=300)
    aliases = _area(_("Aliases (one per line)"), rows=2)
    birth_date = _text(_("Birth date (1985, 1985-03 or 1985-03-14)"), max_length=10)
    phone = _text(_("Phone"), max_length=100)
    address = _area(_("Home address"), rows=2)
    risk_notes = _area(_("Notes on risk"))
    protection_level = forms.ChoiceField(
        label=_("Protection level"), choices=Person.Protection.choices
    )
    victim_status = forms.ChoiceField(
        label=_("Victim status"),
        choices=[("", "—"), *Person.VictimStatus.choices],
        required=False,
    )
    last_seen_on = forms.DateField(
        label=_("Last seen on"), required=False, widget=forms.DateInput({"type": "date"})
    )
    last_seen_place = _text(_("Last seen at"), max_length=200)
    # The detainee number and detention branch are asked on the antemortem profile, where
    # they are sealed (decision 0023).

    def clean_birth_date(self):
        value = self.cleaned_data["birth_date"].strip()
        if value and not _PARTIAL_DATE.match(value):
            raise forms.ValidationError(_("Write the year, year-month or full date: 1985-03-14."))
        return value

    def clean(self):
        data = super().clean() or {}
        if not (data.get("name_ar", "").strip() or data.get("name_latin", "").strip()):
            raise forms.ValidationError(_("Give the name in Arabic or in Latin script."))
        return data

    def identity(self) -> Identity:
        given = {n: self.cleaned_data[n] for n in Identity.__dataclass_fields__ if n in self.fields}
        return Identity(
            **given, name_parts=parts_json({n: self.cleaned_data[n] for n in PART_LABELS})
        )

    def victim_fields(self) -> dict:
        return {
            n: self.cleaned_data[n] for n in ("victim_status", "last_seen_on", "last_seen_place")
        }


class RevealForm(forms.Form):
    reason = forms.CharField(
        label=_("Why do you need to see this identity?"),
        min_length=5,
        max_length=1000,
        widget=forms.Textarea({**_TEXT, "rows": 2}),
    )


class VictimStatusForm(forms.Form):
    """A victim's new status, and why (kept in the profile's history if they have one)."""

    victim_status = forms.ChoiceField(
        label=_("Victim status"),
        choices=[("", "—"), *Person.VictimStatus.choices],
        required=False,
    )
    reason = _text(_("Why does the status change? (optional)"), max_length=500)


class ProtectionForm(forms.Form):
    """A new protection level and why. Any level is accepted here, so that the service
    (``protection_change_refusal``) says why one is refused; the list offers the
    person's ``current`` level, chosen at first and named so, and the levels the user
    may set (``levels``)."""

    level = forms.ChoiceField(label=_("New protection level"), choices=Person.Protection.choices)
    reason = forms.CharField(
        label=_("Why does the protection level change?"),
        max_length=1000,
        widget=forms.Textarea({**_TEXT, "rows": 2}),
    )

    def __init__(self, *args, levels=(), current=None, **kwargs):
        kwargs.setdefault("label_suffix", "")  # no colon after a question mark
        if current is not None:
            kwargs.setdefault("initial", {}).setdefault("level", current)
        super().__init__(*args, **kwargs)
        offered: list[tuple[str, Any]] = []
        for level, label in Person.Protection.choices:
            if level == current:
                offered.append((level, _("%(level)s (current level)") % {"level": label}))
            elif level in levels:
                offered.append((level, label))
        self.fields["level"].widget.choices = offered


class NameLookupForm(forms.Form):
    name = forms.CharField(
        label=_("Is this person already registered? Name"),
        max_length=300,
        widget=forms.TextInput(_TEXT),
    )


class ConsentForm(forms.Form):
    scopes = forms.MultipleChoiceField(
        label=_("Scopes"), choices=ConsentScope.choices, widget=forms.CheckboxSelectMultiple
    )
    bodies = _area(_("Named bodies it may be shared with (one per line)"), rows=2)
    how = forms.ChoiceField(label=_("How given"), choices=Consent.How.choices)
    given_on = forms.DateField(label=_("Date"), widget=forms.DateInput({"type": "date"}))
    notes = _area(_("Notes"), rows=2)

    def clean(self):
        data = super().clean() or {}
        if ConsentScope.SHARING in data.get("scopes", []) and not data.get("bodies", "").strip():
            self.add_error("bodies", _("Name the bodies the testimony may be shared with."))
        return data


class WithdrawalForm(forms.Form):
    scopes = forms.MultipleChoiceField(
        label=_("Scopes withdrawn"),
        choices=ConsentScope.choices,
        widget=forms.CheckboxSelectMultiple,
    )
    how = forms.ChoiceField(label=_("How withdrawn"), choices=Consent.How.choices)
    given_on = forms.DateField(label=_("Date"), widget=forms.DateInput({"type": "date"}))
    notes = _area(_("Notes"), rows=2)

    def __init__(self, *args, in_force: list[str], **kwargs):
        super().__init__(*args, **kwargs)
        choice_field(self, "scopes").choices = [(s, ConsentScope(s).label) for s in in_force]


class RelationForm(forms.Form):
    kind = forms.ChoiceField(label=_("is the"), choices=Relation.Kind.choices)
    other = forms.ChoiceField(label=_("of"))

    def __init__(self, *args, people, **kwargs):
        super().__init__(*args, **kwargs)
        self.people = {p.code: p for p in people}
        choice_field(self, "other").choices = [(c, c) for c in self.people]

    def clean_other(self):
        return self.people[self.cleaned_data["other"]]


class TestimonyForm(forms.Form):
    witness = forms.ChoiceField(label=_("Witness"))
    taken_at = forms.DateTimeField(
        label=_("When (UTC)"), widget=forms.DateTimeInput({"type": "datetime-local"})
    )
    place = _text(_("Where"), max_length=200)
    remote = forms.BooleanField(label=_("Remote interview"), required=False)
    language = forms.ChoiceField(label=_("Language"), choices=Testimony.Language.choices)
    mode = forms.ChoiceField(label=_("Mode"), choices=Testimony.Mode.choices)
    interviewers = forms.ModelMultipleChoiceField(
        label=_("Interviewers"),
        queryset=get_user_model().objects.none(),
        required=False,
        widget=forms.CheckboxSelectMultiple,
    )
    interpreter = _text(_("Interpreter"), max_length=200)
    text = forms.CharField(
        label=_("Statement"), strip=False, widget=forms.Textarea({**_TEXT, "rows": 14})
    )

    def __init__(self, *args, case, people, user, **kwargs):
        super().__init__(*args, **kwargs)
        self.case, self.user = case, user
        self.people = {p.code: p for p in people}
        choice_field(self, "witness").choices = [(c, c) for c in self.people]
        model_choice_field(self, "interviewers").queryset = (
            get_user_model()
            .objects.filter(case_memberships__in=case.memberships.filter(active_membership_q()))
            .order_by("username")
        )
        # Names as colleagues know them, the account beside it to tell two alike apart.
        interviewers = model_choice_field(self, "interviewers")
        interviewers.label_from_instance = lambda user: (  # type: ignore[method-assign, assignment]
            f"{user.get_full_name()} ({user.get_username()})"
            if user.get_full_name()
            else user.get_username()
        )

    def clean_witness(self):
        witness = self.people[self.cleaned_data["witness"]]
        # Its interviewers may reveal a protected witness: not for just anyone to name.
        if refusal := testimony_refusal(self.user, witness, self.case):
            raise forms.ValidationError(refusal)
        return witness


class VersionForm(forms.Form):
    text = forms.CharField(
        label=_("Statement"), strip=False, widget=forms.Textarea({**_TEXT, "rows": 14})
    )
    reason = forms.CharField(
        label=_("Reason for the change"), max_length=300, widget=forms.TextInput(_TEXT)
    )
