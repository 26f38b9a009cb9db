from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django import forms
from django.utils.translation import gettext_lazy as _

from casefiles.forms import blank_first, choice_field
from casefiles.models import Case
from casefiles.widgets import Select

from .models import Assessment, LegalElement, Stance
from .review import TRANSITIONS


class DecisionForm(forms.Form):
    to_status = forms.ChoiceField(label=_("Decision"), widget=forms.RadioSelect)
    comment = forms.CharField(
        label=_("Comment"),
        required=False,
        max_length=5000,
        widget=forms.Textarea({"rows": 3, "dir": "auto"}),
    )

    def __init__(self, *args: Any, source: str, targets: list[str], **kwargs: Any):
        super().__init__(*args, **kwargs)
        choices = [(t, TRANSITIONS[(source, t)].label) for t in targets]
        choice_field(self, "to_status").choices = choices
        if len(targets) == 1:  # the one step open (submitting, say): chosen already
            self.fields["to_status"].initial = targets[0]


class LinkForm(forms.Form):
    element = forms.ChoiceField(label=_("Legal element"), widget=Select)
    stance = forms.ChoiceField(label=_("Stance"), choices=Stance.choices, widget=Select)
    proposition = forms.CharField(
        label=_("What it shows, in your words"),
        max_length=5000,
        widget=forms.Textarea({"rows": 3, "dir": "auto"}),
    )

    def __init__(self, *args: Any, language: str | None = None, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.elements = {
            e.code: e
            for e in LegalElement.objects.filter(
                retired_at__isnull=True, crime__retired_at__isnull=True
            ).select_related("crime")
        }
        groups: dict[str, list[tuple[str, str]]] = {}
        for e in self.elements.values():
            crime = f"{e.crime.article} · {e.crime.label(language)}"
            groups.setdefault(crime, []).append((e.code, f"{e.code} · {e.label(language)}"))
        choice_field(self, "element").choices = [("", "—"), *groups.items()]

    def clean_element(self) -> LegalElement:
        return self.elements[self.cleaned_data["element"]]


class AssessmentForm(forms.ModelForm):
    class Meta:
        model = Assessment
        fields = [
            "reliability",
            "credibility",
            "consistency",
            "geolocation",
            "authenticity",
            "rationale",
        ]
        widgets = {
            "reliability": Select,
            "credibility": Select,
            "consistency": Select,
            "geolocation": Select,
            "authenticity": forms.Textarea({"rows": 2, "dir": "auto"}),
            "rationale": forms.Textarea({"rows": 3, "dir": "auto"}),
        }


class ReasonForm(forms.Form):
    reason = forms.CharField(
        label=_("Reason"), max_length=2000, widget=forms.Textarea({"rows": 2, "dir": "auto"})
    )


class NoteForm(forms.Form):
    note = forms.CharField(
        label=_("Note"),
        required=False,
        max_length=2000,
        widget=forms.Textarea({"rows": 2, "dir": "auto"}),
    )


class CommentForm(forms.Form):
    text = forms.CharField(
        label=_("Comment"),
        max_length=5000,
        help_text=_("Mention a member of the case with @ and their username."),
        widget=forms.Textarea({"rows": 2, "dir": "auto"}),
    )


class BulkForm(forms.Form):
    """A bulk action, its values, and the items: those ticked, or everything the
    workspace's filter (``query``) matches."""

    SELECTED, ALL = "selected", "all"
    NOBODY = "nobody"  # the reviewer chosen to take the assignment off
    # The fields each action takes: the page shows only the chosen action's, and only
    # theirs are checked and used (another action's, still typed in, are ignored).
    FIELDS: dict[str, tuple[str, ...]] = {
        "assign": ("reviewer",),
        "tag_add": ("tag",),
        "tag_remove": ("tag",),
        "sensitivity": ("sensitivity",),
        "submit": (),
        "link": ("element", "stance", "proposition"),
    }

    action = forms.ChoiceField(
        label=_("Bulk action"), error_messages={"required": _("Choose a bulk action.")}
    )
    scope = forms.ChoiceField(
        label=_("On"),
        choices=[(SELECTED, _("the items ticked")), (ALL, _("everything the filter matches"))],
        widget=forms.RadioSelect,
        initial=SELECTED,
    )
    query = forms.CharField(required=False, max_length=2000, widget=forms.HiddenInput)
    reviewer = forms.ChoiceField(label=_("Reviewer"), required=False)
    tag = forms.CharField(label=_("Tag"), required=False, max_length=60)
    sensitivity = forms.ChoiceField(
        label=_("Sensitivity"), required=False, choices=[("", "—"), *Case.Sensitivity.choices]
    )
    element = forms.ChoiceField(label=_("Legal element"), required=False, widget=Select)
    stance = forms.ChoiceField(
        label=_("Stance"), required=False, choices=[("", "—"), *Stance.choices]
    )
    proposition = forms.CharField(
        label=_("What they show, in your words"),
        required=False,
        max_length=5000,
        widget=forms.Textarea({"rows": 2, "dir": "auto"}),
    )

    def __init__(
        self,
        *args: Any,
        actions: list[tuple[str, Any]],
        reviewers: list[tuple[str, str]],
        elements: Callable[[], list[LegalElement]] | None = None,
        language: str | None = None,
        **kwargs: Any,
    ):
        super().__init__(*args, **kwargs)
        choice_field(self, "action").choices = blank_first(actions)
        nobody = (self.NOBODY, _("Nobody (removes the assignment)"))
        choice_field(self, "reviewer").choices = blank_first([nobody, *reviewers])
        catalogue = LegalElement.objects.select_related("crime").order_by(
            "crime__order", "crime__code", "order", "code"
        )

        def current() -> list[tuple[str, str]]:
            found = catalogue if elements is None else elements()
            return [
                ("", "—"),
                *(
                    (e.code, f"{e.code} · {e.label(language)}")
                    for e in found
                    if e.retired_at is None and e.crime.retired_at is None
                ),
            ]

        choice_field(self, "element").choices = current

    def clean_query(self) -> str:
        query = self.cleaned_data["query"]
        if "\x00" in query:
            raise forms.ValidationError(_("The filter is not valid: correct it first."))
        return query

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        own = self.FIELDS.get(data.get("action") or "", ())
        for name in {n for names in self.FIELDS.values() for n in names} - set(own):
            # Another action's field: neither its value nor its errors count.
            data.pop(name, None)
            self.errors.pop(name, None)
        if "reviewer" in own and not data.get("reviewer") and "reviewer" not in self.errors:
            self.add_error("reviewer", _("Choose a reviewer, or Nobody to remove the assignment."))
        return data

    def values(self) -> dict[str, Any]:
        """The values the chosen action takes (the service checks them); Nobody as the
        reviewer is None: the assignment is taken off."""
        values = {
            name: self.cleaned_data.get(name) for name in self.FIELDS[self.cleaned_data["action"]]
        }
        if values.get("reviewer") == self.NOBODY:
            values["reviewer"] = None
        return values


class SavedSearchForm(forms.Form):
    name = forms.CharField(label=_("Name"), max_length=100)
    shared = forms.BooleanField(label=_("Share with the case's members"), required=False)
    query = forms.CharField(required=False, max_length=2000, widget=forms.HiddenInput)
