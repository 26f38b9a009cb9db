from __future__ import annotations

from typing import Any

from django import forms
from django.utils.translation import gettext_lazy as _

from casefiles.forms import choice_field

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
