"""``/search/``: the box in every signed-in page's header, results grouped by type with
their words marked, filters, the access policy, and an exact query count."""

import pytest
from django.db import connection
from django.urls import reverse
from django.utils import timezone

from casefiles.models import AuditEntry
from people import services
from search import index
from tests.evidence.factories import EvidenceItemFactory
from tests.factories import CaseFactory, register_person

pytestmark = pytest.mark.django_db

URL = reverse("search:search")
LOCK = 1 if connection.vendor == "postgresql" else 0
# PostgreSQL asks for the four kinds' results in one statement (a UNION ALL of ranked
# pages); SQLite, which takes no ORDER BY or LIMIT inside a compound, one per kind.
KIND_QUERIES = 1 if connection.features.supports_slicing_ordering_in_compound else 4


@pytest.fixture
def indexed(cast):
    witness = register_person(cast.case, cast.lead, name_ar="عبد الرحمن الخطيب")
    testimony = services.create_testimony(
        actor=cast.lead,
        case=cast.case,
        witness=witness,
        text="سمعنا صوت الطائرة ثم الغارة الجوية على السوق. The market burned.",
        taken_at=timezone.now(),
        language="ar",
        mode="in_person",
    )
    item = EvidenceItemFactory(case=cast.case, title="السوق بعد الغارة", description="market")
    index.reindex(cast.case.pk, ["item"])
    return witness, testimony, item


def _search(client, q, **filters):
    """Search as the box does: post the words, follow the 303 to ``?r=<token>``."""
    posted = client.post(URL, {"q": q, **filters})
    if posted.status_code != 303:
        return posted
    assert posted["Location"].startswith(f"{URL}?r=")
    return client.get(posted["Location"])


def test_the_header_has_the_box_for_signed_in_users_only(client, cast):
    client.force_login(cast.observer)
    page = client.get(reverse("casefiles:case_list")).content.decode()
    assert 'role="search"' in page and f'action="{URL}"' in page
    client.logout()
    assert f'action="{URL}"' not in client.get(reverse("login")).content.decode()


def test_results_are_grouped_and_marked_in_both_languages(client, cast, indexed):
    _, testimony, item = indexed
    client.force_login(cast.lawyer)
    page = _search(client, "الغاره")  # ة typed as ه
    assert page.status_code == 200
    groups = {g.kind.name: [h.reference for h in g.hits] for g in page.context["results"].groups}
    assert groups == {"testimony": [f"T-{testimony.pk:04d}"], "item": [item.reference]}
    html = page.content.decode()
    assert "<mark>الغارة</mark>" in html
    assert item.get_absolute_url() in html
    page = _search(client, "MARKET")
    assert "<mark>market</mark>" in page.content.decode()
    assert len(page.context["results"].groups) == 2


def test_filters_by_case_and_type(client, cast, indexed):
    client.force_login(cast.lawyer)
    page = _search(client, "الغارة", kind="item")
    assert [g.kind.name for g in page.context["results"].groups] == ["item"]
    page = _search(client, "الغارة", case=cast.case.reference)
    assert len(page.context["results"].groups) == 2
    other = CaseFactory()
    page = _search(client, "الغارة", case=other.reference)
    assert page.status_code == 400  # not a case of theirs: no such choice
    assert page.context["results"].groups == []


@pytest.mark.parametrize("who", ["outsider", "admin"])
def test_outsiders_and_admins_not_in_the_case_find_nothing(client, cast, indexed, who):
    client.force_login(getattr(cast, who))
    page = _search(client, "الغارة")
    assert page.status_code == 200
    assert page.context["results"].groups == []
    assert "الطائرة" not in page.content.decode()


def test_a_name_finds_the_person_only_for_who_may_reveal_them(client, cast, indexed):
    witness, _, _ = indexed
    for spelling in ("Abdulrahman", "عبدالرحمن", "Abd al-Rahman al-Khatib"):
        client.force_login(cast.investigator)
        page = _search(client, spelling)
        people = [g for g in page.context["results"].groups if g.kind.name == "person"]
        assert [h.reference for h in people[0].hits] == [witness.code], spelling
        assert people[0].hits[0].by_name
        client.force_login(cast.observer)  # a member whose role reveals no identity
        page = _search(client, spelling)
        assert "person" not in [g.kind.name for g in page.context["results"].groups]


def test_bad_input_is_a_clear_refusal(client, cast):
    client.force_login(cast.lead)
    assert _search(client, "a\x00b").status_code == 400
    assert _search(client, "x" * 201).status_code == 400
    assert _search(client, "x", kind="nonsense").status_code == 400
    assert client.put(URL, {"q": "x"}).status_code == 405
    assert client.get(URL).status_code == 200
    assert client.post(URL, {"q": "  "}).status_code == 200  # nothing to search: the box
    assert not AuditEntry.objects.filter(action="search.query").exists()


def test_each_search_is_audited_without_its_words(client, cast, indexed):
    client.force_login(cast.lead)
    _search(client, "الطائرة")
    entry = AuditEntry.objects.filter(action="search.query").get()
    assert "الطائرة" not in str(entry.details) and "طايره" not in str(entry.details)
    assert entry.details["found"] == {"testimony": 1}


def test_the_page_costs_exactly(client, cast, indexed, django_assert_num_queries):
    """Session, user and second factor; the user's cases (the choices, then with the
    user's role); names: the blind index, the candidates' roles, the people; the kinds'
    results (the statements withheld from the reader are a subquery); the audit entry
    (two savepoints, head, insert, two releases); the header's two questions."""
    client.force_login(cast.lead)
    results = client.post(URL, {"q": "عبدالرحمن"})["Location"]
    client.get(results)
    with django_assert_num_queries(16 + KIND_QUERIES + LOCK):
        page = client.get(results)
    assert [g.kind.name for g in page.context["results"].groups] == ["person"]


def test_the_command_gives_what_the_page_gives(client, cast, indexed):
    import json
    from io import StringIO

    from django.core.management import call_command

    client.force_login(cast.lawyer)
    page = _search(client, "السوق", kind="item")
    shown = [(g.kind.name, [h.url for h in g.hits]) for g in page.context["results"].groups]
    out = StringIO()
    call_command("search", "السوق", "--as", "lawyer", "--kind", "item", "--json", stdout=out)
    given = [
        (g["kind"], [h["url"] for h in g["hits"]]) for g in json.loads(out.getvalue())["groups"]
    ]
    assert given == shown and shown
