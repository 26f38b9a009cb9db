"""casefiles.renderer: no form gives a browser a maxlength to cut a pasted text at; a
text area says its limit, and the field still refuses more."""

from django import forms
from django.utils import translation

from tests.html import attrs, has_text


class _Form(forms.Form):
    name = forms.CharField(max_length=10)
    notes = forms.CharField(max_length=20, widget=forms.Textarea({"rows": 2}))
    free = forms.CharField(required=False, widget=forms.Textarea)


def test_no_maxlength_is_rendered_and_the_text_area_says_its_limit():
    form = _Form()
    html = str(form)
    assert attrs(html, "maxlength") == []
    assert has_text(html, "At most 20 characters.")
    assert attrs(html, "aria-describedby", tag="textarea") == ["id_notes-limit"]
    assert attrs(html, "class", tag="span") == ["hint limit"]  # one: the limited area
    # The widgets keep their attributes: a second rendering is the same.
    assert form.fields["notes"].widget.attrs["maxlength"] == "20"
    assert str(_Form()) == html
    with translation.override("ar"):
        assert has_text(str(_Form()), "20 حرفاً على الأكثر.")


def test_the_limit_is_still_the_server_s_and_what_was_typed_comes_back():
    typed = {"name": "a name of 20 letters", "notes": "n" * 21}
    form = _Form(data=typed)
    assert not form.is_valid()
    assert form.errors["name"] == ["Ensure this value has at most 10 characters (it has 20)."]
    assert form.errors["notes"] == ["Ensure this value has at most 20 characters (it has 21)."]
    html = str(form)
    assert 'value="a name of 20 letters"' in html
    assert f">\n{'n' * 21}</textarea>" in html
