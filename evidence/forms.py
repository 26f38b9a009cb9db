from django import forms
from django.utils.translation import gettext_lazy as _


class MultipleFileInput(forms.ClearableFileInput):
    allow_multiple_selected = True


class MultipleFileField(forms.FileField):
    def __init__(self, *args, **kwargs):
        kwargs.setdefault("widget", MultipleFileInput())
        super().__init__(*args, **kwargs)

    def clean(self, data, initial=None):
        single = super().clean
        if isinstance(data, list | tuple) and data:
            return [single(d, initial) for d in data]
        return [single(data or None, initial)]  # none chosen: "This field is required."


class UploadForm(forms.Form):
    files = MultipleFileField(
        label=_("Files"),
        help_text=_("One or several files, or a ZIP archive of a whole folder or drive."),
    )
    acquired_from = forms.CharField(
        label=_("Acquired from"),
        max_length=200,
        help_text=_("Who handed the material over (a pseudonym such as W-0017 is enough)."),
    )
    medium = forms.CharField(
        label=_("Medium"),
        max_length=200,
        required=False,
        help_text=_("e.g. USB stick, make and serial number"),
    )
    method = forms.CharField(
        label=_("Method"), max_length=100, required=False, initial="uploaded in the browser"
    )
