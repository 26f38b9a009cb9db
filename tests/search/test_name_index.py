"""Names in parts and the keyed blind index: the spellings of a name find each other in
both scripts, only for users who may reveal the person, and no name is ever stored in
the clear."""

import pytest
from django.db import connection
from django.urls import reverse

from casefiles.models import AuditEntry
from people import services
from people.models import Identity, Person, parts_json
from search.names import name_keys
from search.normalise import normalise
from search.query import search
from tests.factories import register_person

pytestmark = pytest.mark.django_db

SPELLINGS = ("Abd al-Rahman", "Abdulrahman", "عبد الرحمن", "عبدالرحمن", "Abdel Rahman")


def _people(user, query):
    groups = {g.kind.name: g for g in search(user, query).groups}
    return [h.reference for h in groups["person"].hits] if "person" in groups else []


@pytest.mark.parametrize("registered", SPELLINGS)
def test_every_spelling_finds_every_other(cast, registered):
    person = register_person(cast.case, cast.lead, name_ar="", name_latin=registered)
    for query in SPELLINGS:
        assert _people(cast.investigator, query) == [person.code], (registered, query)
    assert _people(cast.investigator, "Abd al-Karim") == []


def test_the_parts_of_a_name_find_the_person(cast):
    parts = {
        "given_ar": "مُحَمَّد",
        "father_latin": "Khaled",
        "family_ar": "الحلبي",
        "kunya_latin": "Abu Yasser",
        "laqab_ar": "الطويل",
    }
    person = register_person(
        cast.case, cast.lead, name_ar="محمد خالد", name_parts=parts_json(parts)
    )
    assert person.open_identity().parts() == parts
    for query in ("Muhammad Khalid al-Halabi", "خالد", "Abu Yasir", "al-Tawil", "Halabi"):
        assert _people(cast.lead, query) == [person.code], query


def test_only_who_may_reveal_the_person_finds_them_by_name(cast):
    standard = register_person(cast.case, cast.lead, name_ar="ليلى حسن")
    high = register_person(cast.case, cast.lead, name_ar="ليلى حسين", protection_level="high")
    assert sorted(_people(cast.lead, "Layla")) == sorted([standard.code, high.code])
    assert _people(cast.investigator, "Layla") == [standard.code]  # neither lead nor registrar
    for who in ("observer", "lawyer", "outsider", "admin"):
        assert _people(getattr(cast, who), "Layla") == [], who
    # The code is no secret: every member finds the person by it.
    assert _people(cast.observer, high.code) == [high.code]


def test_no_name_is_stored_in_the_clear(cast):
    """Every text of every table, read back as a dump would: no name, in no normal form,
    no name key."""
    # (a family name no seeded place, term or element holds)
    names = ["عبد الرحمن الدباغ", "Abdulrahman al-Dabbagh", "أبو ياسر"]
    register_person(
        cast.case,
        cast.lead,
        name_ar=names[0],
        name_latin=names[1],
        name_parts=parts_json({"kunya_ar": names[2], "given_latin": "Abdulrahman"}),
    )
    needles = {n for name in names for n in (name, normalise(name), *normalise(name).split())}
    needles |= {k for name in names for k in name_keys(name) if len(k) > 3}
    needles -= {"al", "ابو"}
    with connection.cursor() as cursor:
        for table in connection.introspection.table_names(cursor):
            cursor.execute(f"SELECT * FROM {connection.ops.quote_name(table)}")
            dump = "\n".join(map(str, cursor.fetchall())).casefold()
            found = sorted(n for n in needles if n.casefold() in dump)
            assert not found, (table, found)


def test_names_are_corrected_on_the_identity_page_and_keyed_again(client, cast):
    person = register_person(cast.case, cast.lead, name_ar="سامر")
    client.force_login(cast.lead)
    page = client.post(
        reverse("people:person_reveal", args=[cast.case.reference, person.code]),
        {"reason": "checking the spelling"},
    )
    assert page.context["names_form"].initial["name_ar"] == "سامر"
    page = client.post(
        reverse("people:person_names", args=[cast.case.reference, person.code]),
        {"name_ar": "سمير", "family_latin": "Haddad", "aliases": "Abu Fadi"},
    )
    assert page.status_code == 302
    assert Person.objects.get(pk=person.pk).open_identity().parts() == {"family_latin": "Haddad"}
    entry = AuditEntry.objects.filter(action="people.names").get()
    assert entry.details["changed"] == ["name_ar", "aliases", "name_parts"]
    assert "Haddad" not in str(entry.details)
    assert _people(cast.lead, "Haddad") == [person.code]
    assert _people(cast.lead, "أبو فادي") == [person.code]


def test_who_may_not_reveal_may_not_change_names(client, cast):
    person = register_person(cast.case, cast.lead, protection_level="critical")
    client.force_login(cast.investigator)
    url = reverse("people:person_names", args=[cast.case.reference, person.code])
    assert client.post(url, {"name_ar": "x"}).status_code == 403
    client.force_login(cast.observer)
    assert client.post(url, {"name_ar": "x"}).status_code == 404
    assert person.open_identity().name_ar == "ليلى حسن"


def test_a_person_registered_before_names_had_parts_still_opens(cast):
    person = register_person(cast.case, cast.lead)
    Person.objects.filter(pk=person.pk).update(enc_name_parts="")
    assert Person.objects.get(pk=person.pk).open_identity() == Identity(name_ar="ليلى حسن")
    report = services.rotate_field_keys()
    assert report.reencrypted == 1
    assert Person.objects.get(pk=person.pk).enc_name_parts.startswith("athar1:")


def test_a_rotation_in_chunks_keys_every_name_again_once_under_a_new_index_key(cast, monkeypatch):
    """Search follows the rotation's last entry, not each chunk's."""
    import secrets

    from django.test import override_settings

    from search import names_index

    people = [register_person(cast.case, cast.lead, name_latin=f"Haddad {n}") for n in "abc"]
    calls = []
    real = names_index.reindex
    monkeypatch.setattr(names_index, "reindex", lambda *a: calls.append(a) or real(*a))
    with override_settings(BLIND_INDEX_KEY=secrets.token_bytes(32)):
        assert _people(cast.investigator, "Haddad") == []
        services.rotate_field_keys(batch_size=1)
        assert sorted(_people(cast.investigator, "Haddad")) == sorted(p.code for p in people)
    assert len(calls) == 1


def _named_queries(user, query):
    from django.test.utils import CaptureQueriesContext

    from search import names_index
    from search.query import _cases

    cases = _cases(user, None)
    with CaptureQueriesContext(connection) as queries:
        found = names_index.people_named(user, cases, query)
    return found, len(queries.captured_queries)


def test_a_name_search_costs_the_same_queries_whatever_it_matches(cast):
    """High-protection people are revealed to the interviewers of their testimony: asked
    for all the people matched at once, not once a person."""
    from django.utils import timezone

    def high(n):
        return [
            register_person(cast.case, cast.lead, name_ar="ليلى حسين", protection_level="high")
            for _ in range(n)
        ]

    (interviewed,) = high(1)
    services.create_testimony(
        actor=cast.lead,
        case=cast.case,
        witness=interviewed,
        text="Statement.",
        taken_at=timezone.now(),
        language="ar",
        mode="in_person",
        interviewers=[cast.investigator],
    )
    found, one = _named_queries(cast.investigator, "Layla")
    assert found == {(str(interviewed.pk), cast.case.pk)}
    high(4)
    found, five = _named_queries(cast.investigator, "Layla")
    assert found == {(str(interviewed.pk), cast.case.pk)}  # the others' names stay hidden
    # the name keys, the people's roles, the people, who interviewed them
    assert (one, five) == (4, 4), "a query per person matched"
