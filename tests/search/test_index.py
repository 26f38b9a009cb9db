"""The index: kept current by the writes it follows, rebuilt by ``reindex``, matched in
both scripts, and read only as the access policy lets each user read."""

import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.db import connection, transaction
from django.utils import timezone

from casefiles.models import AuditEntry
from evidence.services import update_item
from people import services
from search import index
from search.models import Entry
from search.query import query_digest, search
from tests.evidence.factories import EvidenceItemFactory
from tests.factories import CaseFactory, MembershipFactory, register_person

pytestmark = pytest.mark.django_db


def _testimony(cast, witness, text, **kwargs):
    return services.create_testimony(
        actor=cast.lead,
        case=cast.case,
        witness=witness,
        text=text,
        taken_at=timezone.now(),
        language="ar",
        mode="in_person",
        **kwargs,
    )


def _found(user, query, **kwargs):
    results = search(user, query, **kwargs)
    return {g.kind.name: [h.reference for h in g.hits] for g in results.groups}


def test_a_testimony_is_found_by_a_variant_spelling_as_soon_as_it_is_logged(cast):
    witness = register_person(cast.case, cast.lead)
    testimony = _testimony(cast, witness, "رأيتُ مُحَمَّد في فرع فلسطين بعد الغارة الجوية.")
    reference = f"T-{testimony.pk:04d}"
    for query in ("محمد", "مُحمّد", "فلسطين", "الغاره الجويه", "ﻓﺮﻉ"):
        assert _found(cast.investigator, query) == {"testimony": [reference]}, query
    assert _found(cast.investigator, "حمص") == {}


def test_a_revision_replaces_what_is_indexed_in_the_same_transaction(cast):
    witness = register_person(cast.case, cast.lead)
    testimony = _testimony(cast, witness, "The convoy left at dawn.")
    services.revise_testimony(
        actor=cast.lead, testimony=testimony, text="The bus left at night.", reason="corrected"
    )
    assert _found(cast.lead, "convoy") == {}
    assert _found(cast.lead, "BUS night") == {"testimony": [f"T-{testimony.pk:04d}"]}


def test_a_write_that_rolls_back_leaves_the_index_as_it_was(cast):
    item = EvidenceItemFactory(case=cast.case, title="IMG_0001.jpg")
    index.reindex(cast.case.pk)
    with pytest.raises(RuntimeError), transaction.atomic():
        update_item(actor=cast.lead, item=item, tags=["checkpoint"], description="tank")
        raise RuntimeError
    assert _found(cast.lead, "checkpoint") == {}
    update_item(actor=cast.lead, item=item, tags=["checkpoint"], description="A tank")
    assert _found(cast.lead, "checkpoint") == {"item": [item.reference]}
    assert _found(cast.lead, "tank") == {"item": [item.reference]}


def test_items_are_found_inside_their_file_names_and_by_reference(cast):
    item = EvidenceItemFactory(case=cast.case, title="", original_filename="IMG_20140820_1.jpg")
    other = EvidenceItemFactory(case=cast.case, title="صورة من دوما")
    index.reindex(cast.case.pk)
    assert _found(cast.lawyer, "20140820") == {"item": [item.reference]}
    assert _found(cast.lawyer, item.reference) == {"item": [item.reference]}
    assert _found(cast.lawyer, "دوما") == {"item": [other.reference]}


def test_results_keep_to_the_access_policy(cast):
    """An outsider and an admin outside the case find nothing; an observer does not find
    the statement of a protected witness, nor an item attached to it; the lead does."""
    protected = register_person(cast.case, cast.lead, protection_level="high")
    testimony = _testimony(cast, protected, "Shelling of the market near the bakery.")
    attached = EvidenceItemFactory(case=cast.case, title="bakery recording", testimony=testimony)
    public = EvidenceItemFactory(case=cast.case, title="bakery photograph")
    index.reindex(cast.case.pk)
    assert _found(cast.outsider, "bakery") == {}
    assert _found(cast.admin, "bakery") == {}
    assert _found(cast.observer, "bakery") == {"item": [public.reference]}
    lead = _found(cast.lead, "bakery")
    assert lead["testimony"] == [f"T-{testimony.pk:04d}"]
    assert sorted(lead["item"]) == sorted([public.reference, attached.reference])


def test_another_case_is_not_searched(cast):
    elsewhere = CaseFactory()
    EvidenceItemFactory(case=elsewhere, title="bakery elsewhere")
    mine = EvidenceItemFactory(case=cast.case, title="bakery here")
    index.reindex()
    assert _found(cast.lead, "bakery") == {"item": [mine.reference]}
    MembershipFactory(user=cast.lead, case=elsewhere)
    assert len(_found(cast.lead, "bakery")["item"]) == 2
    assert _found(cast.lead, "bakery", case=cast.case) == {"item": [mine.reference]}
    assert _found(cast.lead, "bakery", kinds=["testimony"]) == {}


def test_snippets_are_escaped_and_marked(cast):
    witness = register_person(cast.case, cast.lead)
    _testimony(cast, witness, "<script>alert(1)</script> the checkpoint at <b>Harasta</b>")
    hit = search(cast.lead, "harasta").groups[0].hits[0]
    assert "<script>" not in hit.snippet
    assert "&lt;script&gt;" in hit.snippet
    assert "&lt;b&gt;<mark>Harasta</mark>&lt;/b&gt;" in hit.snippet


def test_a_search_is_audited_by_a_digest_of_its_words_not_the_words(cast):
    search(cast.lead, "Harasta checkpoint")
    entry = AuditEntry.objects.get(action="search.query")
    assert entry.actor_id == cast.lead.pk
    assert "harasta" not in json.dumps(entry.details).lower()
    assert entry.details["digest"] == query_digest(["checkpoint", "harasta"])


def test_reindex_rebuilds_what_was_written_before_the_index(cast):
    witness = register_person(cast.case, cast.lead)
    _testimony(cast, witness, "Detained at the airport branch.")
    EvidenceItemFactory(case=cast.case, title="airport gate")
    Entry.objects.all().delete()
    out = StringIO()
    call_command("reindex", "--case", cast.case.reference, stdout=out)
    assert "item: 1" in out.getvalue()
    assert set(_found(cast.lead, "airport")) == {"item", "testimony"}


def test_the_command_gives_the_pages_results(cast):
    EvidenceItemFactory(case=cast.case, title="Barrel bomb in Daraa")
    index.reindex()
    out = StringIO()
    call_command("search", "درعا daraa", "--as", "lead", "--json", stdout=out)
    assert json.loads(out.getvalue())["groups"] == []
    call_command("search", "daraa", "--as", "lead", "--json", stdout=out)
    doc = json.loads(out.getvalue().split("\n}\n", 1)[1])
    assert [g["kind"] for g in doc["groups"]] == ["item"]
    out = StringIO()
    call_command("search", "daraa", "--as", "outsider", "--json", stdout=out)
    assert json.loads(out.getvalue())["groups"] == []


@pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL's indexes")
def test_arabic_trigram_and_word_searches_use_their_indexes(cast):
    """A database whose LC_CTYPE makes no trigrams of Arabic letters (LC_CTYPE=C) would
    scan the table instead: this fails there."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT show_trgm('عبد الرحمن')")
        assert len(cursor.fetchone()[0]) > 5, "pg_trgm makes no trigrams of Arabic here"
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute("EXPLAIN SELECT id FROM search_entry WHERE short LIKE '%%عبد%%'")
        plan = "\n".join(r[0] for r in cursor.fetchall())
        assert "search_entry_short" in plan, plan
        cursor.execute(
            "EXPLAIN SELECT id FROM search_entry"
            " WHERE vector @@ plainto_tsquery('simple'::regconfig, 'عبد')"
        )
        plan = "\n".join(r[0] for r in cursor.fetchall())
        assert "search_entry_vector" in plan, plan


def test_reindex_keeps_every_role_of_a_person_whose_roles_cross_a_chunk(cast, monkeypatch):
    """The index is rebuilt a chunk of rows at a time: a person's rows cut by the chunk's end
    are all read, not skipped (the person's entry names both roles)."""
    from people.services import add_case_role
    from search import declared

    both = register_person(cast.case, cast.lead, role="witness")
    add_case_role(actor=cast.lead, person=both, case=cast.case, role="victim")
    from people.models import CaseRole

    before = CaseRole.objects.filter(person_id__lt=both.pk).count()
    monkeypatch.setattr(declared, "CHUNK", before + 1)  # the cut: between its two roles
    Entry.objects.all().delete()
    index.reindex()
    title = Entry.objects.get(kind="person", key=str(both.pk)).title.lower()
    assert "witness" in title and "victim" in title
