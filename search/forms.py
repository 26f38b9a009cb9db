"""The search box and its filters."""

from __future__ import annotations

from typing import Any

from django import forms
from django.utils.translation import gettext_lazy as _

from .kinds import kinds
from .query import MAX_QUERY


class SearchForm(forms.Form):
    q = forms.CharField(label=_("Search"), max_length=MAX_QUERY, required=False)
    case = forms.ChoiceField(label=_("Case"), required=False)
    kind = forms.ChoiceField(label=_("Type"), required=False)

    def __init__(self, *args: Any, cases: list[tuple[str, str]], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        case, kind = self.fields["case"], self.fields["kind"]
        if not (isinstance(case, forms.ChoiceField) and isinstance(kind, forms.ChoiceField)):
            raise TypeError("case and kind are choice fields")
        case.choices = [("", _("All my cases")), *cases]
        kind.choices = [("", _("Everything")), *((k.name, k.label) for k in kinds())]
