"""The forms of sign-in: a second-factor code, and a recovery code with its username; and
the user's own preferences."""

from django import forms
from django.utils.translation import gettext_lazy


class CodeForm(forms.Form):
    code = forms.CharField(
        label=gettext_lazy("Code"),
        max_length=32,
        widget=forms.TextInput(
            attrs={"autocomplete": "one-time-code", "inputmode": "text", "autofocus": True}
        ),
    )


class RecoveryCodeForm(forms.Form):
    username = forms.CharField(
        label=gettext_lazy("Username"),
        max_length=150,
        widget=forms.TextInput(attrs={"autocomplete": "username", "autofocus": True}),
    )
    code = forms.CharField(
        label=gettext_lazy("Recovery code"),
        max_length=32,
        widget=forms.TextInput(attrs={"autocomplete": "off", "spellcheck": "false"}),
    )


class PreferencesForm(forms.Form):
    blur_graphic = forms.BooleanField(
        label=gettext_lazy("Always blur graphic images"),
        required=False,
        help_text=gettext_lazy(
            "Graphic evidence stays blurred in galleries and lists even after you reveal "
            "it; only the item's own page shows it, once you choose to see it."
        ),
    )
