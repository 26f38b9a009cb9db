"""Keyset pages and counts that stop: what a reader of a long list sees."""

import pytest
from django.db import connection
from django.test import RequestFactory
from django.urls import reverse

from casefiles import paging
from casefiles.models import AuditEntry
from tests.factories import register_person

pytestmark = pytest.mark.django_db


def test_a_count_past_the_limit_says_so_and_never_claims_to_be_exact(cast, monkeypatch):
    for _ in range(5):
        register_person(cast.case, cast.lead)
    from people.models import Person

    people = Person.objects.filter(case=cast.case)
    assert paging.count(people, limit=5) == paging.Count(5)
    past = paging.count(people, limit=3)
    assert not past.exact
    if connection.vendor == "postgresql":
        # The planner's figure for the whole, said to be one (or "more than" when it
        # guesses below the limit: an estimate is never shown below what was counted).
        assert str(past) in ("more than 3", f"about {past.value}")
        assert past.value >= 3
    else:
        assert str(past) == "more than 3"


def test_counts_are_written_with_the_same_digits_in_both_languages():
    from django.utils import translation

    assert str(paging.Count(1234567, exact=False, estimated=True)) == "about 1234567"
    with translation.override("ar"):
        assert str(paging.Count(12000, exact=False)) == "أكثر من 12000"
    assert paging._rounded(1_234_567) == 1_200_000
    assert paging._rounded(987) == 990


def test_a_cursor_of_several_keys_comes_back_as_it_went(cast):
    keyset = paging.Keyset(paging.Key("person__code"), paging.Key("role"), size=2)
    person = register_person(cast.case, cast.lead, role="victim")
    role = person.case_roles.get()
    cursor = keyset.cursor(role)
    assert keyset.parse(cursor) == [person.code, "victim"]
    for odd in ("", "!!", "W1siYSJdXQ", "e30", "x" * 401, "WyJhIiwgMV0"):
        with pytest.raises(ValueError):
            keyset.parse(odd)


def test_a_list_past_the_count_limit_shows_more_than_on_the_gallery(client, cast, monkeypatch):
    from tests.legal.helpers import many_items

    many_items(cast.case, 4)
    monkeypatch.setattr(paging, "COUNT_LIMIT", 3)
    client.force_login(cast.lawyer)
    page = client.get(reverse("evidence:gallery", args=[cast.case.reference]))
    shown = str(page.context["page"].total)
    assert shown == "more than 3" or shown.startswith("about "), shown
    monkeypatch.setattr(paging, "COUNT_LIMIT", 10)
    page = client.get(reverse("evidence:gallery", args=[cast.case.reference]))
    assert str(page.context["page"].total) == "4"


def test_pages_by_a_descending_key_walk_the_whole_list_both_ways(cast):
    from casefiles import audit

    for n in range(7):
        audit.record(None, "case.update", n=n)
    keyset = paging.Keyset(paging.Key("-seq", paging.number), size=3)
    entries = AuditEntry.objects.all()
    every = list(entries.order_by("-seq").values_list("seq", flat=True))
    factory = RequestFactory()
    seen, query = [], {}
    while True:
        page = keyset.page(entries, factory.get("/", query), total=False)
        seen += [e.seq for e in page]
        if not page.has_next:
            break
        query = {"after": page.last}
    assert seen == every
    back = keyset.page(entries, factory.get("/", {"before": str(every[3])}), total=False)
    assert [e.seq for e in back] == every[:3] and not back.has_previous
