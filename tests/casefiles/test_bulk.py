"""``insert_rows`` sends a plain value (a str of a text field, an int of an integer field
or of a key to one) as it is: only where the field's own preparation gives it back
unchanged on this database (psycopg wraps integers), checked for every such field of
every model."""

import pytest
from django.apps import apps
from django.db import connection

from casefiles.bulk import plain_type

SAMPLES = {str: ["", "EV-000001", "عبد الرحمن", "1"], int: [0, 1, -7, 2**62]}


def _plain_fields():
    return [
        pytest.param(field, plain, id=f"{model._meta.label}.{field.name}")
        for model in apps.get_models()
        for field in model._meta.concrete_fields
        if (plain := plain_type(field, connection)) is not None
    ]


def test_many_fields_are_sent_as_they_are():
    assert len(_plain_fields()) > 100  # text on both databases, integers too on SQLite


@pytest.mark.parametrize(("field", "plain"), _plain_fields())
def test_a_plain_value_is_what_its_field_would_send(field, plain):
    for value in [None, *SAMPLES[plain]]:
        prepared = field.get_db_prep_save(value, connection)
        assert prepared == value and type(prepared) is type(value), (field, value)
