"""Every sealed column of every app is registered (``people.sealed``), so ``rotate_keys``
re-encrypts it: a column left out would stay on the old key and be lost with it."""

import pytest
from django.apps import apps

from people import sealed
from people.models import Person


def test_every_sealed_field_of_every_app_is_registered():
    registered = {e.label: set(e.columns) for e in sealed.registered()}
    found = {
        model._meta.label: set(sealed.sealed_fields(model))
        for model in apps.get_models()
        if sealed.sealed_fields(model)
    }
    assert found == registered
    assert {"people.Person", "missing.Profile", "missing.Candidate"} <= set(found)


def test_a_column_that_is_not_sealed_cannot_be_registered():
    with pytest.raises(ValueError, match="code"):
        sealed.register(Person, ["enc_name_ar", "code"])
    with pytest.raises(ValueError, match="enc_nothing"):
        sealed.register(Person, ["enc_nothing"])
    assert "enc_name_ar" in next(e for e in sealed.registered() if e.model is Person).columns
