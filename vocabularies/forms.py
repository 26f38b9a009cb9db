"""Form fields that offer the terms of a scheme: current ones only, and the one a record
already holds (retired or not), so that an edit neither offers a retired term for a new
record nor drops it from an old one."""

from __future__ import annotations

from typing import Any

from django import forms

from .models import Term


class TermField(forms.ModelChoiceField):
    def __init__(self, scheme: str, *, keep: Term | int | None = None, **kwargs: Any) -> None:
        super().__init__(queryset=Term.objects.offered(scheme, keep), **kwargs)
        self.scheme = scheme

    def keep(self, term: Term | int | None) -> None:
        """Offer ``term`` too (the record being edited holds it)."""
        self.queryset = Term.objects.offered(self.scheme, term)

    def label_from_instance(self, obj: Term) -> str:
        # The hierarchy, shown by indentation (a select has no other way).
        return "\u00a0\u00a0" * obj.depth + str(obj)
