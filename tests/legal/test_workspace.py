"""The review workspace (/cases/<ref>/review/): a case's items filtered by what lawyers
record about them, paged by reference, with searches kept on the server; a value it
refuses is left out and said, never a server error; exact queries pinned."""

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from casefiles.access import LAWYER_GROUP, Role
from casefiles.models import AuditEntry
from casefiles.reviewing import ReviewStatus as S
from evidence import services as evidence_services
from evidence.models import EvidenceItem
from legal.models import Assessment, LegalElement, ReviewAssignment, SavedSearch
from legal.services import assessments, links, review, searches
from tests.evidence.factories import EvidenceItemFactory
from tests.factories import MembershipFactory, UserFactory
from tests.legal.helpers import many_items, withheld_item

pytestmark = pytest.mark.django_db

TORTURE = "RS-7-1-f.1"
CHAIN_LOCK = 1 if connection.vendor == "postgresql" else 0


def _url(cast):
    return reverse("legal:workspace", args=[cast.case.reference])


def shown(response) -> list[str]:
    """The references of the tiles on a workspace page, in order."""
    assert response.status_code == 200, response.content[:500]
    return re.findall(r'<span class="ref">(EV-\d+)</span>', response.content.decode())


def _assess(who, case, item, reliability, credibility):
    assessments.assess(
        actor=who,
        case=case,
        record=item,
        reliability=reliability,
        credibility=credibility,
        consistency="same",
        geolocation="unknown",
        rationale="Seen against the branch's numbering.",
    )


def _link(who, case, item, stance):
    return links.link_to_element(
        actor=who,
        case=case,
        record=item,
        element=LegalElement.objects.get(code=TORTURE),
        stance=stance,
        proposition="Marks of binding on both wrists.",
    )


@pytest.fixture
def world(cast):
    """Items that each answer one filter (the letters name them)."""
    case = cast.case
    made = {name: EvidenceItemFactory(case=case) for name in "abcdefghij"}
    review.decide(actor=cast.investigator, record=made["a"], to_status=S.SUBMITTED)
    review.decide(actor=cast.investigator, record=made["b"], to_status=S.SUBMITTED)
    review.decide(actor=cast.lawyer, record=made["b"], to_status=S.APPROVED)
    _assess(cast.lawyer, case, made["c"], "B", "2")
    _assess(cast.lawyer, case, made["c"], "C", "3")  # the lawyer's latest: B2 no longer
    _assess(cast.lead, case, made["c"], "A", "1")
    _link(cast.lawyer, case, made["d"], "supports")
    _link(cast.lawyer, case, made["e"], "contradicts")
    withdrawn = _link(cast.lawyer, case, made["f"], "supports")
    links.withdraw_link(actor=cast.lawyer, link=withdrawn, reason="Wrong photograph.")
    EvidenceItem.objects.filter(pk=made["g"].pk).update(sensitivity="strict", kind="document")
    evidence_services.update_item(actor=cast.investigator, item=made["g"], tags=["morgue"])
    EvidenceItem.objects.filter(pk=made["h"].pk).update(near_group=made["h"].pk)
    ReviewAssignment.objects.create(
        item=made["i"],
        case=case,
        reviewer=cast.lawyer,
        assigned_by=cast.lead,
        assigned_at=timezone.now(),
    )
    return {name: item.reference for name, item in made.items()}


def pager(response) -> str:
    return re.search(r'<nav class="pager".*?</nav>', response.content.decode(), re.S).group(0)


def _found(client, cast, world, **params) -> set[str]:
    by_reference = {ref: name for name, ref in world.items()}
    return {by_reference[ref] for ref in shown(client.get(_url(cast), params))}


def test_each_filter_finds_the_items_it_names(client, cast, world):
    client.force_login(cast.lawyer)
    assert _found(client, cast, world) == set("abcdefghij")
    assert _found(client, cast, world, status=S.SUBMITTED) == {"a"}
    assert _found(client, cast, world, status=S.APPROVED) == {"b"}
    assert _found(client, cast, world, element=TORTURE) == {"d", "e"}  # f's link withdrawn
    assert _found(client, cast, world, stance="supports") == {"d"}
    assert _found(client, cast, world, element=TORTURE, stance="contradicts") == {"e"}
    assert _found(client, cast, world, reviewer=cast.investigator.pk) == {"a"}
    assert _found(client, cast, world, reviewer=cast.lawyer.pk) == {"b", "c"}
    assert _found(client, cast, world, reviewer=cast.lead.pk) == {"c"}
    assert _found(client, cast, world, assigned=cast.lawyer.pk) == {"i"}
    assert _found(client, cast, world, sensitivity="strict") == {"g"}
    assert _found(client, cast, world, tag="morgue") == {"g"}
    assert _found(client, cast, world, kind="document") == {"g"}
    near = EvidenceItem.objects.get(reference=world["h"]).near_group
    assert _found(client, cast, world, near_group=near) == {"h"}
    assert _found(client, cast, world, status=S.NEW, kind="photo", sensitivity="strict") == set()


def test_grades_are_those_of_each_assessors_latest_assessment(client, cast, world):
    client.force_login(cast.lawyer)
    assert _found(client, cast, world, reliability="B") == set()  # superseded by C3
    assert _found(client, cast, world, reliability="C") == {"c"}
    assert _found(client, cast, world, reliability="A") == {"c"}  # the lead's, side by side
    assert _found(client, cast, world, reliability="C", credibility="3") == {"c"}
    # Both grades of one assessment: no assessor's latest is C1.
    assert _found(client, cast, world, reliability="C", credibility="1") == set()
    page = client.get(_url(cast), {"reliability": "C"}).content.decode()
    assert '<span class="grades" dir="ltr">C3 · A1</span>' in page
    assert Assessment.objects.filter(item__reference=world["c"]).count() == 3


@pytest.mark.parametrize(
    "params",
    [
        {"status": "bogus"},
        {"near_group": "abc"},
        {"near_group": "1e30"},
        {"near_group": "99999999999999999999"},
        {"reviewer": "\x00"},
        {"reviewer": "999999"},
        {"assigned": "1\x00"},
        {"tag": "\x00"},
        {"element": "RS-\x00"},
        {"reliability": "Z", "credibility": "\x00"},
    ],
)
def test_a_value_the_filter_refuses_is_left_out_and_said(client, cast, world, params):
    client.force_login(cast.lawyer)
    response = client.get(_url(cast), params)
    page = response.content.decode()
    if params.get("near_group") in ("1e30", "99999999999999999999"):
        assert shown(response) == []  # a number no group has: nothing matches
        return
    assert len(shown(response)) == 10  # the filter is left out, the items shown
    assert "These filters were left out, their values are not valid" in page
    # ... and the page offers no bulk action over "everything the filter matches".
    assert 'value="all"' not in page


@pytest.mark.parametrize("cursor", ["after", "before"])
def test_a_page_position_it_cannot_read_shows_the_first_page(client, cast, world, cursor):
    client.force_login(cast.lawyer)
    for value in ["EV-\x00", "x" * 500]:
        response = client.get(_url(cast), {cursor: value})
        assert len(shown(response)) == 10
        assert "That page position is not valid" in response.content.decode()


def test_pages_follow_the_references_without_counting(client, cast):
    many_items(cast.case, 50)
    client.force_login(cast.lawyer)
    first = client.get(_url(cast), {"status": S.NEW})
    refs = shown(first)
    assert refs == [f"EV-{n:06d}" for n in range(1, 49)]
    nav = pager(first)
    assert "after=EV-000048" in nav and "before=" not in nav
    second = client.get(_url(cast), {"status": S.NEW, "after": "EV-000048"})
    assert shown(second) == ["EV-000049", "EV-000050"]
    nav = pager(second)
    assert "after=" not in nav and "status=draft&amp;before=EV-000049" in nav
    back = client.get(_url(cast), {"status": S.NEW, "before": "EV-000049"})
    assert shown(back) == refs


def test_the_case_page_links_the_workspace(client, cast):
    client.force_login(cast.observer)
    page = client.get(cast.case.get_absolute_url()).content.decode()
    assert f'href="{_url(cast)}"' in page


def test_outsiders_and_admins_outside_the_case_find_no_workspace(client, cast, world):
    for who in (cast.outsider, cast.admin):
        client.force_login(who)
        assert client.get(_url(cast)).status_code == 404


def test_the_page_is_audited_with_the_items_it_shows(client, cast, world):
    client.force_login(cast.observer)
    client.get(_url(cast), {"status": S.SUBMITTED})
    entry = AuditEntry.objects.filter(action="legal.workspace").get()
    assert entry.details["items"] == [world["a"]]
    assert entry.details["filters"] == "status=submitted"


def test_observers_see_the_items_but_no_bulk_action(client, cast, world):
    client.force_login(cast.observer)
    page = client.get(_url(cast)).content.decode()
    assert len(shown(client.get(_url(cast)))) == 10
    assert 'name="item"' not in page and 'id="bulk"' not in page


def test_thumbnails_shown_are_served_to_whom_the_page_gave_them(client, cast, photos):
    client.force_login(cast.lawyer)
    page = client.get(_url(cast)).content.decode()
    urls = re.findall(r'<img[^>]* src="([^"]+)"', page)
    assert len(urls) == 3
    response = client.get(urls[0].replace("&amp;", "&"))
    assert response.status_code == 200 and response["Content-Type"] == "image/jpeg"


def test_a_withheld_item_shows_no_picture_and_answers_no_filter_on_its_content(
    client, cast, photos
):
    item = withheld_item(cast, photos)
    client.force_login(cast.investigator)
    response = client.get(_url(cast))
    assert item.reference in shown(response)
    page = response.content.decode()
    assert len(re.findall(r"<img ", page)) == 2  # the other two photos
    assert "Withheld: attached to a protected statement" in page
    assert shown(client.get(_url(cast), {"tag": "morgue"})) == []
    client.force_login(cast.lead)  # who registered the witness reads the statement
    assert shown(client.get(_url(cast), {"tag": "morgue"})) == [item.reference]


# -- saved searches -------------------------------------------------------------------
def _save(client, cast, name, query, shared=False):
    data = {"name": name, "query": query}
    if shared:
        data["shared"] = "on"
    return client.post(reverse("legal:search_save", args=[cast.case.reference]), data)


def test_a_saved_search_is_its_owners_unless_shared(client, cast, world):
    second = UserFactory(username="second", groups=[LAWYER_GROUP])
    MembershipFactory(user=second, case=cast.case, role=Role.LAWYER)
    client.force_login(cast.lawyer)
    response = _save(client, cast, "Submitted photos", "status=submitted&kind=photo")
    assert response.status_code == 302
    _save(client, cast, "Torture, shared", f"element={TORTURE}", shared=True)
    mine = client.get(_url(cast)).content.decode()
    assert "Submitted photos" in mine and "Torture, shared" in mine
    # Applied by a click: the link carries the filter.
    assert 'href="?status=submitted&amp;kind=photo"' in mine
    client.force_login(second)
    theirs = client.get(_url(cast)).content.decode()
    assert "Torture, shared" in theirs and "Submitted photos" not in theirs
    assert [e.action for e in AuditEntry.objects.filter(action__startswith="legal.search")] == [
        "legal.search_save",
        "legal.search_save",
    ]
    entry = AuditEntry.objects.filter(action="legal.search_save").first()
    assert entry.details["query"] == "status=submitted&kind=photo"


def test_a_saved_search_keeps_only_what_the_filter_reads(client, cast, world):
    client.force_login(cast.lawyer)
    _save(client, cast, "Odd", "kind=photo&status=bogus&page=3&after=EV-000002&near_group=x")
    assert SavedSearch.objects.get().query == "kind=photo"


def test_outsiders_neither_see_nor_keep_searches_of_the_case(client, cast, world):
    searches.save_search(
        actor=cast.lawyer, case=cast.case, name="Shared", query="kind=photo", shared=True
    )
    search = SavedSearch.objects.get()
    client.force_login(cast.outsider)
    assert _save(client, cast, "Mine", "kind=photo").status_code == 404
    delete = reverse("legal:search_delete", args=[cast.case.reference, search.pk])
    assert client.post(delete).status_code == 404
    assert not SavedSearch.objects.visible_to(cast.outsider).exists()
    assert SavedSearch.objects.count() == 1


def test_only_the_owner_deletes_a_saved_search(client, cast, world):
    searches.save_search(
        actor=cast.lawyer, case=cast.case, name="Shared", query="kind=photo", shared=True
    )
    private = searches.save_search(
        actor=cast.lawyer, case=cast.case, name="Mine", query="kind=video"
    )
    shared = SavedSearch.objects.get(name="Shared")
    client.force_login(cast.lead)
    delete = reverse("legal:search_delete", args=[cast.case.reference, shared.pk])
    assert client.post(delete).status_code == 403  # seen by all members, theirs to keep
    mine = reverse("legal:search_delete", args=[cast.case.reference, private.pk])
    assert client.post(mine).status_code == 404  # another's private search: not there
    assert client.get(delete).status_code == 405
    client.force_login(cast.lawyer)
    assert client.post(delete).status_code == 302
    assert list(SavedSearch.objects.values_list("name", flat=True)) == ["Mine"]
    entry = AuditEntry.objects.filter(action="legal.search_delete").get()
    assert entry.details["name"] == "Shared" and entry.actor_id == cast.lawyer.pk


# -- queries ----------------------------------------------------------------------------
# The session, the user and their second factor (3), the case with the viewer's role (1),
# the page of items with their thumbnails and assignments (1), their latest grades (1),
# the audited page's entry (4 here: a savepoint, the chain's head, the entry, the release;
# and the chain's lock on PostgreSQL), the bulk actions and reviewers offered (2), the
# page's menu (2), the saved searches (1), and the elements, members and tags the
# filters offer (3): whatever the number of items, assessments and filters.
WORKSPACE_QUERIES = 18 + CHAIN_LOCK


@pytest.mark.parametrize("count", [3, 30])
def test_the_workspace_costs_an_exact_number_of_queries(client, cast, count):
    items = many_items(cast.case, count)
    for item in items[:count:3]:
        _assess(cast.lawyer, cast.case, item, "B", "2")
        ReviewAssignment.objects.create(
            item=item,
            case=cast.case,
            reviewer=cast.lawyer,
            assigned_by=cast.lead,
            assigned_at=timezone.now(),
        )
    client.force_login(cast.lawyer)
    url = _url(cast)
    client.get(url)  # the session and the language settle on the first request
    for params in ({}, {"status": S.NEW, "reliability": "B", "assigned": cast.lawyer.pk}):
        with CaptureQueriesContext(connection) as page:
            response = client.get(url, params)
        assert response.status_code == 200
        assert len(page.captured_queries) == WORKSPACE_QUERIES, [q["sql"] for q in page]


def test_the_workspace_and_a_bulk_confirmation_in_arabic(client, cast, world):
    client.cookies["django_language"] = "ar"
    client.force_login(cast.lawyer)
    page = client.get(_url(cast), {"status": "bogus"}).content.decode()
    assert 'dir="rtl"' in page
    for arabic in ("مساحة المراجعة", "عمليات البحث المحفوظة", "إجراء جماعي", "حالة المراجعة"):
        assert arabic in page
    assert "أُهملت عوامل التصفية هذه" in page  # the refused filter, said in Arabic
    response = client.post(
        reverse("legal:bulk", args=[cast.case.reference]),
        {"action": "submit", "scope": "all", "query": ""},
    )
    page = response.content.decode()
    assert "العناصر التي سيغيّرها هذا الإجراء" in page and "حالة مراجعته: مقدَّمة" in page
