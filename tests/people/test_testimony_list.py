"""The case's testimonies as a list: filters, pages by time taken, the same queries
whatever the number of testimonies, no statement shown, and only for the case's members."""

import re
from datetime import timedelta

import pytest
from django.db import connection
from django.urls import reverse
from django.utils import timezone

from casefiles.models import AuditEntry
from people import services
from tests.factories import register_person

pytestmark = pytest.mark.django_db
LOCK = 1 if connection.vendor == "postgresql" else 0


def _log(cast, witness, days_ago, language="ar", text="رأيت الحاجز."):
    return services.create_testimony(
        actor=cast.lead,
        case=cast.case,
        witness=witness,
        text=text,
        taken_at=timezone.now() - timedelta(days=days_ago),
        language=language,
        mode="in_person",
        interviewers=[cast.investigator],
    )


def _shown(response):
    return [t.pk for t in response.context["page"]]


def test_the_list_shows_newest_first_and_filters_by_language_witness_and_date(client, cast):
    one = register_person(cast.case, cast.lead)
    two = register_person(cast.case, cast.lead)
    old = _log(cast, one, 400, language="en")
    mid = _log(cast, two, 30)
    new = _log(cast, one, 1)
    client.force_login(cast.lawyer)
    url = reverse("people:testimony_list", args=[cast.case.reference])
    response = client.get(url)
    assert _shown(response) == [new.pk, mid.pk, old.pk]
    assert str(response.context["page"].total) == "3"
    entry = AuditEntry.objects.filter(action="testimony.list").latest("seq")
    assert (entry.details["testimonies"], entry.case_id) == ([new.pk, mid.pk, old.pk], cast.case.pk)
    assert _shown(client.get(url, {"language": "en"})) == [old.pk]
    assert _shown(client.get(url, {"witness": one.code.lower()})) == [new.pk, old.pk]
    since = (timezone.now() - timedelta(days=60)).date().isoformat()
    assert _shown(client.get(url, {"taken_after": since})) == [new.pk, mid.pk]
    assert "No testimony matches." in client.get(url, {"witness": "W-9999"}).content.decode()
    # No statement on the list: it is read on the testimony's own page, audited there.
    assert "رأيت الحاجز" not in response.content.decode()


def test_the_pages_follow_one_another_by_time_taken_and_back(client, cast, settings):
    from people import testimony_views

    witness = register_person(cast.case, cast.lead)
    logged = [_log(cast, witness, days) for days in range(7)]
    # Two taken at the same moment: the id orders them, neither is lost between pages.
    twin = _log(cast, witness, 3)
    expected = [
        t.pk for t in sorted([*logged, twin], key=lambda t: (-t.taken_at.timestamp(), t.pk))
    ]
    client.force_login(cast.lead)
    url = reverse("people:testimony_list", args=[cast.case.reference])
    size = testimony_views.TESTIMONY_PAGES.size
    testimony_views.TESTIMONY_PAGES.size = 3
    try:
        seen, response = [], client.get(url)
        while True:
            seen += _shown(response)
            found = re.search(r'rel="next" href="\?([^"]*)"', response.content.decode())
            if not found:
                break
            response = client.get(f"{url}?{found.group(1).replace('&amp;', '&')}")
        assert seen == expected
        back = re.search(r'rel="prev" href="\?([^"]*)"', response.content.decode()).group(1)
        assert _shown(client.get(f"{url}?{back.replace('&amp;', '&')}")) == expected[3:6]
    finally:
        testimony_views.TESTIMONY_PAGES.size = size


@pytest.mark.parametrize("odd", ["x", "2012-01-01", "bm90IGpzb24", "W1siYSJdXQ", "\u00b2" * 500])
def test_a_page_position_never_given_shows_the_first_page_with_a_word(client, cast, odd):
    witness = register_person(cast.case, cast.lead)
    first = _log(cast, witness, 1)
    client.force_login(cast.lead)
    url = reverse("people:testimony_list", args=[cast.case.reference])
    response = client.get(url, {"after": odd})
    assert response.status_code == 200
    assert _shown(response) == [first.pk]
    assert "That page position is not valid" in response.content.decode()


def test_the_list_costs_the_same_queries_for_many_testimonies(
    client, cast, django_assert_num_queries
):
    witness = register_person(cast.case, cast.lead)
    _log(cast, witness, 1)
    client.force_login(cast.investigator)
    url = reverse("people:testimony_list", args=[cast.case.reference])
    client.get(url)
    with django_assert_num_queries(12 + LOCK):
        small = client.get(url)
    for days in range(2, 14):
        _log(cast, witness, days)
    with django_assert_num_queries(12 + LOCK):
        big = client.get(url, {"language": "ar"})
    assert len(big.context["page"]) == len(small.context["page"]) + 12


def test_only_the_case_members_see_the_list(client, cast):
    url = reverse("people:testimony_list", args=[cast.case.reference])
    for user in (cast.outsider, cast.admin):
        client.force_login(user)
        assert client.get(url).status_code == 404, user


def test_the_list_is_linked_from_the_case_and_its_people_and_reads_in_arabic(client, cast):
    witness = register_person(cast.case, cast.lead)
    _log(cast, witness, 1)
    client.force_login(cast.lead)
    url = reverse("people:testimony_list", args=[cast.case.reference])
    assert f'href="{url}"' in client.get(cast.case.get_absolute_url()).content.decode()
    people = reverse("people:people_list", args=[cast.case.reference])
    assert f'href="{url}"' in client.get(people).content.decode()
    client.cookies["django_language"] = "ar"
    page = client.get(url).content.decode()
    assert "الإفادات" in page and 'dir="rtl"' in page
