from django import forms
from django.utils import timezone
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from casefiles.forms import model_choice_field
from people.models import Person, Testimony

from .intake.sources import parse_manifest, zip_encoding_name
from .models import CustodyEvent, Identification
from .services import METHOD_UPLOADED, PURPOSE_FIXITY, RECORDABLE_CUSTODY


def people_of(case, user):
    """The people with a role in ``case``, as the policy lets ``user`` see them."""
    return Person.objects.visible_to(user).filter(case_roles__case=case).distinct()


class MultipleFileInput(forms.ClearableFileInput):
    allow_multiple_selected = True


class MultipleFileField(forms.FileField):
    def __init__(self, *args, **kwargs):
        kwargs.setdefault("widget", MultipleFileInput())
        # A 0-byte file is evidence too: stored, hashed and flagged, as ingest does.
        kwargs.setdefault("allow_empty_file", True)
        super().__init__(*args, **kwargs)

    def clean(self, data, initial=None):
        single = super().clean
        if isinstance(data, list | tuple) and data:
            return [single(d, initial) for d in data]
        return [single(data or None, initial)]  # none chosen: "This field is required."


class UploadForm(forms.Form):
    # A declared field, taken out of the class by Django's form metaclass: it never
    # shadows ``BaseForm.files`` at run time, as the stubs fear.
    files = MultipleFileField(  # type: ignore[assignment]
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
    method = forms.CharField(label=_("Method"), max_length=100, required=False)
    graphic = forms.BooleanField(
        label=_("Graphic content"),
        required=False,
        help_text=_(
            "Every file taken in is marked graphic: shown blurred until someone chooses to see it."
        ),
    )

    # What ``ingest --manifest`` and ``--zip-encoding`` take, read by the same functions.
    custodian_manifest = forms.FileField(
        label=_("Custodian's checksum list"),
        required=False,
        allow_empty_file=True,
        help_text=_(
            "Optional: the list the custodian made (sha256sum, sha1sum or md5sum), "
            "checked file by file against what arrives."
        ),
    )
    zip_encoding = forms.CharField(
        label=_("Encoding of names in a ZIP"),
        max_length=40,
        required=False,
        help_text=_("Optional: for a ZIP whose names are not UTF-8, e.g. cp720 (Arabic Windows)."),
    )

    def clean_custodian_manifest(self):
        listed = self.cleaned_data["custodian_manifest"]
        if listed is None:
            return None
        data = b"".join(listed.chunks())
        try:
            list(parse_manifest(data))
        except ValueError as exc:
            raise forms.ValidationError(
                _("Not a custodian's checksum list: %(problem)s"), params={"problem": exc}
            ) from None
        return data

    def clean_zip_encoding(self):
        name = self.cleaned_data["zip_encoding"].strip()
        if not name:
            return ""
        try:
            return zip_encoding_name(name)
        except ValueError:
            raise forms.ValidationError(
                _("Unknown encoding %(name)s for ZIP names."), params={"name": name}
            ) from None

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # Left blank, the method recorded is the app's own words, shown in the reader's
        # language: the hint says them so, rather than an English value to type over.
        self.fields["method"].widget.attrs["placeholder"] = gettext(METHOD_UPLOADED)


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
    source_person = forms.ModelChoiceField(
        label=_("Source"),
        queryset=Person.objects.none(),
        required=False,
        help_text=_("Who gave this item."),
    )
    testimony = forms.ModelChoiceField(
        label=_("Attached to testimony"),
        queryset=Testimony.objects.none(),
        required=False,
        help_text=_("A recording, scanned statement or drawing that belongs to a testimony."),
    )

    def __init__(self, *args, case, user, **kwargs):
        super().__init__(*args, **kwargs)
        model_choice_field(self, "source_person").queryset = people_of(case, user)
        model_choice_field(self, "testimony").queryset = (
            Testimony.objects.visible_to(user).filter(case=case).select_related("witness")
        )

    def clean_tags(self):
        names = [t.strip() for t in self.cleaned_data["tags"].split(",")]
        names = sorted({n for n in names if n})
        if any(len(n) > 60 for n in names):
            raise forms.ValidationError(_("A tag has at most 60 characters."))
        return names


class IdentificationForm(forms.Form):
    witness = forms.ModelChoiceField(label=_("Witness"), queryset=Person.objects.none())
    identified = forms.ModelChoiceField(label=_("Recognises"), queryset=Person.objects.none())
    confidence = forms.ChoiceField(label=_("Confidence"), choices=Identification.Confidence)
    method = forms.ChoiceField(label=_("How"), choices=Identification.Method)
    identified_on = forms.DateField(
        label=_("When"), initial=timezone.localdate, widget=forms.DateInput(attrs={"type": "date"})
    )
    notes = forms.CharField(label=_("Notes"), widget=forms.Textarea, required=False)

    def __init__(self, *args, case, user, **kwargs):
        super().__init__(*args, **kwargs)
        model_choice_field(self, "witness").queryset = people_of(case, user)
        model_choice_field(self, "identified").queryset = people_of(case, user)

    def clean(self):
        data = super().clean() or {}
        if data.get("witness") and data.get("witness") == data.get("identified"):
            self.add_error("identified", _("A witness identifies someone else."))
        return data


class CustodyEventForm(forms.Form):
    """A hand-over, return, analysis or storage move, as the person recording it states it."""

    action = forms.ChoiceField(
        label=_("What happened"),
        choices=[(a.value, a.label) for a in RECORDABLE_CUSTODY],
    )
    at = forms.DateTimeField(
        label=_("When (UTC)"),
        required=False,
        widget=forms.DateTimeInput(attrs={"type": "datetime-local"}),
        help_text=_("Left blank: now."),
    )
    from_custodian = forms.CharField(label=_("From"), max_length=200, required=False)
    to_custodian = forms.CharField(label=_("To"), max_length=200, required=False)
    location = forms.CharField(label=_("Where"), max_length=200, required=False)
    purpose = forms.CharField(label=_("Purpose"), max_length=300, required=False)
    notes = forms.CharField(label=_("Notes"), widget=forms.Textarea, required=False)

    # What each kind of event cannot be recorded without.
    NEEDS: dict[str, tuple[str, ...]] = {
        CustodyEvent.Action.TRANSFERRED: ("from_custodian", "to_custodian"),
        CustodyEvent.Action.RETURNED: ("to_custodian",),
        CustodyEvent.Action.ANALYSED: ("purpose",),
        CustodyEvent.Action.STORED: ("location",),
    }

    def __init__(self, *args, item, **kwargs):
        super().__init__(*args, **kwargs)
        self.item = item

    def clean_at(self):
        at = self.cleaned_data["at"]
        if at is None:
            return None
        if at > timezone.now():
            raise forms.ValidationError(_("This is in the future."))
        if at < self.item.created_at:
            raise forms.ValidationError(
                _("The item was taken in on %(when)s: its custody starts then.")
                % {"when": self.item.created_at.strftime("%Y-%m-%d %H:%M")}
            )
        return at

    def clean_purpose(self):
        purpose = self.cleaned_data["purpose"]
        if purpose.strip().lower().startswith(PURPOSE_FIXITY.partition("%")[0]):
            # The sweep's own words: the item page folds those events into its summary.
            raise forms.ValidationError(
                _("These are the fixity sweep's words: say it another way.")
            )
        return purpose

    def clean(self):
        data = super().clean() or {}
        for name in self.NEEDS.get(str(data.get("action", "")), ()):
            if not data.get(name, "").strip():
                self.add_error(name, _("Needed for this kind of event."))
        return data
