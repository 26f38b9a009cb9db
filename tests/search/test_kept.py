"""A search posts its words and its results are at ``/search/?r=<token>``: the words are
in no URL (decision 0024), kept encrypted in the session for a short while, for that
session only; a ``q`` in a URL is never searched."""

import pytest
from django.contrib.sessions.models import Session
from django.urls import reverse

from casefiles.models import AuditEntry
from search import kept
from tests.conftest import VerifiedClient
from tests.factories import register_person
from tests.html import attrs, has_text, shows

pytestmark = pytest.mark.django_db

URL = reverse("search:search")
NAME = "Walid Munir al-Khatib"
EXPIRED = "This search is no longer kept"
NOT_FROM_URL = "Words in the page's address are not searched"


@pytest.fixture
def walid(cast):
    return register_person(cast.case, cast.lead, name_latin=NAME)


def _post(client, q, **filters):
    posted = client.post(URL, {"q": q, **filters})
    assert posted.status_code == 303
    return posted["Location"]


def _people(page):
    return [h.reference for g in page.context["results"].groups for h in g.hits]


def _searches():
    return AuditEntry.objects.filter(action="search.query").count()


def test_the_words_go_by_post_and_the_results_are_at_a_token(client, cast, walid):
    client.force_login(cast.lead)
    box = client.get(URL)
    assert attrs(box, "method", "form")[:2] == ["post", "post"]  # the header's and the page's
    location = _post(client, "Walid Munir")
    token = location.removeprefix(f"{URL}?r=")
    assert len(token) == 22 and "Walid" not in location and "Munir" not in location
    page = client.get(location)
    assert page.status_code == 200 and _people(page) == [walid.code]
    # The box shows the words again (in the page, which is never stored), and no link or
    # form on the page carries them.
    assert "Walid Munir" in attrs(page, "value", "input")
    for link in attrs(page, "href") + attrs(page, "action"):
        assert "Walid" not in link and "Munir" not in link and "q=" not in link, link
    # Shown again (a reload): searched and audited again, with the same token.
    assert _people(client.get(location)) == [walid.code] and _searches() == 2


def test_the_filters_are_kept_with_the_words(client, cast, walid):
    client.force_login(cast.lead)
    page = client.get(_post(client, "Walid", kind="item"))
    assert page.status_code == 200 and _people(page) == []
    page = client.get(_post(client, "Walid", kind="person", case=cast.case.reference))
    assert _people(page) == [walid.code]


def test_the_session_row_holds_the_words_encrypted(client, cast, walid):
    client.force_login(cast.lead)
    _post(client, NAME)
    stored = Session.objects.get(session_key=client.session.session_key)
    for text in (stored.session_data, str(stored.get_decoded())):
        for word in ("Walid", "Munir", "Khatib"):
            assert word not in text


def test_a_kept_search_expires(client, cast, walid, monkeypatch):
    client.force_login(cast.lead)
    location = _post(client, "Walid")
    later = kept._now() + kept.KEEP_SECONDS + 1
    monkeypatch.setattr(kept, "_now", lambda: later)
    page = client.get(location)
    assert page.status_code == 200 and has_text(page, EXPIRED)
    assert page.context["results"].groups == [] and not shows(page, "Walid")
    assert _searches() == 0
    assert kept.SESSION_KEY not in client.session or not client.session[kept.SESSION_KEY]


@pytest.mark.parametrize(
    "token", ["A" * 22, "", "x" * 5000, "a\x00b", "../../etc", "ÿ" * 22, "A" * 21 + "\x00"]
)
def test_an_unknown_or_malformed_token_is_a_plain_message(client, cast, token):
    client.force_login(cast.lead)
    page = client.get(URL, {"r": token})
    assert page.status_code == 200 and has_text(page, EXPIRED)
    assert page.context["results"].groups == []


def test_a_token_is_nothing_in_another_session_or_to_another_user(client, cast, walid):
    client.force_login(cast.lead)
    location = _post(client, "Walid")
    other = VerifiedClient()
    other.force_login(cast.lead)  # the same person, another session
    assert has_text(other.get(location), EXPIRED)
    # The kept words are sealed to the user: copied into another user's session, they
    # do not open.
    other.force_login(cast.investigator)
    session = other.session
    session[kept.SESSION_KEY] = client.session[kept.SESSION_KEY]
    session.save()
    page = other.get(location)
    assert has_text(page, EXPIRED) and page.context["results"].groups == []
    assert _searches() == 0


def test_a_session_keeps_only_the_latest_searches(client, cast, walid):
    client.force_login(cast.lead)
    locations = [_post(client, f"Walid {n}") for n in range(kept.MAX_KEPT + 1)]
    assert has_text(client.get(locations[0]), EXPIRED)
    for location in locations[1:]:
        assert not has_text(client.get(location), EXPIRED)
    assert len(client.session[kept.SESSION_KEY]) == kept.MAX_KEPT


def test_words_in_the_url_are_not_searched(client, cast, walid):
    """A ``q`` is dropped from the address (an old bookmark, a typed URL), by a redirect
    to the empty box, which says why."""
    client.force_login(cast.lead)
    answer = client.get(URL, {"q": NAME, "kind": "person"})
    assert answer.status_code == 302 and answer["Location"] == URL
    page = client.get(answer["Location"])
    assert page.status_code == 200 and has_text(page, NOT_FROM_URL)
    assert page.context["results"].groups == [] and not shows(page, "Walid")
    assert _searches() == 0


def test_the_messages_are_in_arabic_too(client, cast):
    client.force_login(cast.lead)
    client.cookies["django_language"] = "ar"
    assert has_text(
        client.get(URL, {"r": "A" * 22}), "لم يعد هذا البحث محفوظًا (يُحفظ البحث 15 دقيقة"
    )
    page = client.get(client.get(URL, {"q": "x"})["Location"])
    assert has_text(page, "لا يُبحث عن الكلمات الواردة في عنوان الصفحة")
