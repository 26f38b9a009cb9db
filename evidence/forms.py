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


class ItemForm(forms.Form):
    """What an investigator states about an item; the file and its metadata stay as read."""

    title = forms.CharField(label=_("Title"), max_length=300, required=False)
    description = forms.CharField(label=_("Description"), widget=forms.Textarea, required=False)
    claimed_date = forms.DateField(
        label=_("Claimed date"),
        required=False,
        widget=forms.DateInput(attrs={"type": "date"}),
        help_text=_("When the source says it was made, if that differs from the camera clock."),
    )
    claimed_place = forms.CharField(label=_("Claimed place"), max_length=200, required=False)
    tags = forms.CharField(
        label=_("Tags"), required=False, help_text=_("Separated by commas."), max_length=600
    )

    def clean_tags(self):
        names = [t.strip() for t in self.cleaned_data["tags"].split(",")]
        names = sorted({n for n in names if n})
        if any(len(n) > 60 for n in names):
            raise forms.ValidationError(_("A tag has at most 60 characters."))
        return names
