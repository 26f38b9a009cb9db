"""casefiles.widgets.Select writes the HTML Django's own Select writes, only faster."""

import pytest
from django import forms
from django.utils import translation

from casefiles.widgets import Select
from legal.forms import AssessmentForm, LinkForm

CHOICES = [
    ("", "—"),
    ("Art. 7 · Crimes against humanity", [("7-1-f", "Torture <of a detainee>"), ("7-1-i", "B")]),
    (3, "Three & more"),
]


@pytest.mark.parametrize("value", [None, "", "7-1-f", "3", ["3"]])
@pytest.mark.parametrize(
    "attrs",
    [
        None,
        {"id": "id_element", "required": True},
        {"id": "e", "disabled": False, "data-label": 'a "quoted" <label>', "dir": "auto"},
    ],
)
def test_the_same_html_as_djangos_select(value, attrs):
    theirs = forms.Select(choices=CHOICES).render("element", value, attrs)
    ours = Select(choices=CHOICES).render("element", value, attrs)
    assert ours == theirs


@pytest.mark.django_db
@pytest.mark.parametrize("form_class", [LinkForm, AssessmentForm])
def test_the_item_pages_lists_render_as_django_renders_them(form_class, monkeypatch):
    """The legal elements in their groups and the assessment's grades, in Arabic."""
    with translation.override("ar"):
        form = LinkForm(language="ar") if form_class is LinkForm else AssessmentForm()
        names = [n for n, f in form.fields.items() if isinstance(f.widget, Select)]
        assert names  # the item page's lists are ours
        ours = [str(form[name]) for name in names]
        monkeypatch.setattr(Select, "render", forms.Select.render)
        assert ours == [str(form[name]) for name in names]
