from __future__ import annotations

from typing import Any

from django import forms
from django.utils.translation import gettext_lazy as _

from casefiles.forms import choice_field

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
    element = forms.ChoiceField(label=_("Legal element"))
    stance = forms.ChoiceField(label=_("Stance"), choices=Stance.choices)
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
