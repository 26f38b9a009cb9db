"""The missing pages: who may open them, what bad input gets, and their query counts."""

import re
from html.parser import HTMLParser

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from casefiles.models import AuditEntry
from missing.models import Candidate, Session
from missing.services import missing as services
from people.models import Person
from tests.evidence.helpers import take_in
from tests.evidence.images import jpeg_bytes
from tests.html import attrs, has_text

from .conftest import FAMILY_CONTACT, identify_first

pytestmark = pytest.mark.django_db
CHAIN_LOCK = 1 if connection.vendor == "postgresql" else 0  # an audit entry locks the chain


def _session(cast, missing):
    return services.prepare_session(
        actor=cast.lead, case=cast.case, profile=missing.profile, family_member=missing.mother
    )


def _url(name, cast, *args):
    return reverse(f"missing:{name}", args=[cast.case.reference, *args])


def test_the_profile_shows_the_family_contact_only_after_an_audited_reveal(client, cast, missing):
    client.force_login(cast.investigator)
    url = _url("profile", cast, missing.victim.code)
    page = client.get(url)
    assert page.status_code == 200 and FAMILY_CONTACT not in page.content.decode()
    assert not AuditEntry.objects.filter(action="missing.profile_reveal").exists()
    page = client.post(url)
    assert FAMILY_CONTACT in page.content.decode()
    assert AuditEntry.objects.filter(action="missing.profile_reveal").count() == 1


@pytest.mark.parametrize("who", ["observer", "lawyer"])
def test_members_who_may_not_reveal_see_no_profile(client, cast, missing, who):
    client.force_login(getattr(cast, who))
    url = _url("profile", cast, missing.victim.code)
    assert client.get(url).status_code == 200
    assert client.post(url).status_code == 403
    assert client.get(_url("profile_edit", cast, missing.victim.code)).status_code == 403


def test_outsiders_get_404(client, cast, missing):
    session = _session(cast, missing)
    client.force_login(cast.outsider)
    assert client.get(_url("profile", cast, missing.victim.code)).status_code == 404
    assert client.get(_url("session", cast, session.pk)).status_code == 404


@pytest.mark.parametrize("who", ["investigator", "observer", "lawyer"])
def test_only_the_lead_opens_and_runs_a_session(client, cast, missing, who):
    session = _session(cast, missing)
    candidate = session.candidates.first()
    client.force_login(getattr(cast, who))
    assert client.get(_url("session", cast, session.pk)).status_code == 403
    assert client.post(_url("show", cast, session.pk, candidate.pk)).status_code == 403
    assert client.get(_url("session_create", cast, missing.victim.code)).status_code == 403
    assert not AuditEntry.objects.filter(action="missing.photo_shown").exists()


def test_a_session_from_the_pages(client, cast, missing):
    client.force_login(cast.lead)
    page = client.post(
        _url("session_create", cast, missing.victim.code),
        {"family_member": missing.mother.pk, "number_from": "10", "number_to": "30"},
    )
    assert page.status_code == 302
    session = missing.profile.sessions.get()
    page = client.get(page["Location"])
    html = page.content.decode()
    assert (
        html.count('class="candidate blurred"') == 2 and "<img" not in html.split("candidates")[-1]
    )
    first = session.candidates.first()
    client.post(_url("show", cast, session.pk, first.pk))
    html = client.get(_url("session", cast, session.pk)).content.decode()
    assert html.count('class="candidate blurred"') == 1 and "thumbnail/?t=" in html
    assert AuditEntry.objects.filter(action="missing.photo_shown").count() == 1
    # No consent: the form again, with what was typed, and nothing recorded.
    bad = client.post(
        _url("identify", cast, session.pk, first.pk),
        {"confidence": "certain", "status": "identified", "present": "The lead and the mother"},
    )
    assert bad.status_code == 400 and "The lead and the mother" in bad.content.decode()
    done = client.post(
        _url("identify", cast, session.pk, first.pk),
        {
            "confidence": "certain",
            "status": "deceased",
            "present": "The lead and the mother",
            "consent": "on",
        },
    )
    assert done.status_code == 302
    assert Person.objects.get(pk=missing.victim.pk).victim_status == "deceased"
    assert Candidate.objects.get(pk=first.pk).identification.identified == missing.victim


@pytest.mark.parametrize(
    "data",
    [
        {"family_member": "nope"},
        {"family_member": "999999"},
        {"number_from": "9", "number_to": "2"},
        {"number_from": "99999999999999999999"},
        {"taken_from": "2013-13-45"},
        {"number_from": "900", "number_to": "901"},  # no photo matches
    ],
)
def test_bad_session_input_gets_the_form_again(client, cast, missing, data):
    client.force_login(cast.lead)
    data = {"family_member": missing.mother.pk, **data}
    page = client.post(_url("session_create", cast, missing.victim.code), data)
    assert page.status_code == 400


def test_bad_ids_and_methods_are_no_500(client, cast, missing):
    session = _session(cast, missing)
    client.force_login(cast.lead)
    assert client.get(_url("session", cast, 999999)).status_code == 404
    assert client.post(_url("show", cast, session.pk, 999999)).status_code == 404
    assert (
        client.get(_url("show", cast, session.pk, session.candidates.first().pk)).status_code == 405
    )
    assert (
        client.post(_url("status", cast, missing.victim.code), {"status": "x"}).status_code == 302
    )
    assert (
        client.post(
            _url("profile_edit", cast, missing.victim.code), {"last_seen_on": "x"}
        ).status_code
        == 400
    )


def _queries(client, url, method="get"):
    with CaptureQueriesContext(connection) as page:
        assert getattr(client, method)(url).status_code == 200
    return len(page)


def test_query_counts_of_the_missing_pages(client, cast, missing):
    session = _session(cast, missing)
    client.force_login(cast.lead)
    for candidate in session.candidates.all():
        services.show_candidate(actor=cast.lead, case=cast.case, candidate=candidate)
    counts = {
        "list": _queries(client, _url("list", cast)),
        "profile": _queries(client, _url("profile", cast, missing.victim.code)),
        "reveal": _queries(client, _url("profile", cast, missing.victim.code), "post"),
        "session": _queries(client, _url("session", cast, session.pk)),
    }
    assert counts == {
        "list": 12 + CHAIN_LOCK,
        "profile": 10,
        # 16, was 17: the profile's person (whose status it shows) is the one the page
        # already found, no longer fetched again by the reveal.
        "reveal": 16 + CHAIN_LOCK,
        "session": 8,
    }


class _Forms(HTMLParser):
    """The ids of the whole page, and each identify form's input ids and label targets."""

    def __init__(self):
        super().__init__()
        self.ids, self.forms, self._form = [], [], None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if "id" in attrs:
            self.ids.append(attrs["id"])
        if tag == "form" and "identify" in (attrs.get("class") or ""):
            self._form = {"inputs": [], "labels": []}
            self.forms.append(self._form)
        elif self._form is not None and tag in ("input", "select", "textarea") and "id" in attrs:
            self._form["inputs"].append(attrs["id"])
        elif self._form is not None and tag == "label":
            self._form["labels"].append(attrs["for"])

    def handle_endtag(self, tag):
        if tag == "form":
            self._form = None


def _parsed(page):
    parser = _Forms()
    parser.feed(page.content.decode())
    return parser


def test_each_shown_photo_has_an_identify_form_with_its_own_ids(client, cast, missing):
    session = _session(cast, missing)
    for candidate in session.candidates.all():
        services.show_candidate(actor=cast.lead, case=cast.case, candidate=candidate)
    client.force_login(cast.lead)
    page = _parsed(client.get(_url("session", cast, session.pk)))
    assert len(page.forms) == 3
    assert len(page.ids) == len(set(page.ids))  # no id twice on the page
    for form in page.forms:  # each label names an input of its own form
        assert len(form["labels"]) == 5 and set(form["labels"]) <= set(form["inputs"])
    # A form sent back with an error keeps its candidate's ids and what was typed.
    first = session.candidates.first()
    bad = client.post(
        _url("identify", cast, session.pk, first.pk),
        {"confidence": "certain", "status": "identified", "present": "The lead and the mother"},
    )
    assert bad.status_code == 400
    page = _parsed(bad)
    assert len(page.ids) == len(set(page.ids))
    typed = re.search(r'<input [^>]*value="The lead and the mother"[^>]*>', bad.content.decode())
    assert typed and f'id="c{first.pk}-present"' in typed[0]


def test_who_was_present_is_shown_to_the_lead_on_the_session_page(client, cast, missing):
    session, _ = identify_first(cast, missing, present="The lead, the mother, a psychologist")
    client.force_login(cast.lead)
    html = client.get(_url("session", cast, session.pk)).content.decode()
    assert "The lead, the mother, a psychologist" in html
    client.force_login(cast.investigator)
    assert client.get(_url("session", cast, session.pk)).status_code == 403


def test_the_session_form_in_arabic_has_no_english_placeholder(client, cast, missing):
    client.force_login(cast.lead)
    client.cookies["django_language"] = "ar"
    html = client.get(_url("session_create", cast, missing.victim.code)).content.decode()
    assert "Select an option" not in html
    assert html.count("- اختر من القائمة -") == 2  # family member and facility


def _more_photos(cast, tmp_path, numbers):
    """More photos of the case, bodies ``numbers`` (small, to be quick)."""
    files = {f"DSC_{n:04d}.JPG": jpeg_bytes(n, size=(32, 24)) for n in numbers}
    take_in(cast.case, cast.investigator, files, tmp_path / "more")


def _ids(page):
    return [i for i in attrs(page, "id", "li") if re.fullmatch(r"c[0-9]+", i)]


def test_a_session_holds_every_matching_photo_a_page_at_a_time(client, cast, missing, tmp_path):
    """More than the 60 a session used to keep, all of them, paged; the page says how many
    matched and how many the filters left out (body 7 is below the range)."""
    _more_photos(cast, tmp_path, range(100, 162))
    session = services.prepare_session(
        actor=cast.lead,
        case=cast.case,
        profile=missing.profile,
        family_member=missing.mother,
        number_from=10,
    )
    assert session.candidates.count() == 64  # 12, 20 and 100 to 161
    client.force_login(cast.lead)
    url = _url("session", cast, session.pk)
    page = client.get(url)
    assert has_text(page, "Photos that matched the filters 64")
    assert has_text(page, "Photos of this case the filters left out 1")
    assert has_text(page, "The filters left out 1 of this case's photos")
    assert has_text(page, "Body numbers: 10\u2013\u2026")
    assert has_text(page, "Photos 1 to 24 of 64.")
    seen, queries = [], []
    while True:
        seen += _ids(page)
        nexts = [a for a in attrs(page, "href", "a") if "after=" in a]
        if not nexts:
            break
        with CaptureQueriesContext(connection) as counted:
            page = client.get(url + nexts[-1])
        queries.append(len(counted))
    assert len(seen) == len(set(seen)) == 64
    assert has_text(page, "Photos 49 to 64 of 64.")
    assert len(set(queries)) == 1  # the last page costs what the second does
    # Looking at a photo of the third page comes back to that page, at that photo.
    third = session.candidates.get(order=50)
    back = client.post(_url("show", cast, session.pk, third.pk))
    assert back["Location"] == f"{url}?after=48#c{third.pk}"
    assert f"c{third.pk}" in _ids(client.get(back["Location"]))
    # A form of that photo sent back with an error is shown on its page, as typed.
    bad = client.post(_url("identify", cast, session.pk, third.pk), {"present": "The mother"})
    assert bad.status_code == 400 and f"c{third.pk}" in _ids(bad)
    assert f"c{third.pk}-present" in attrs(bad, "id", "input")


def test_no_filter_leaves_nothing_out_and_says_so(client, cast, missing):
    session = _session(cast, missing)
    client.force_login(cast.lead)
    page = client.get(_url("session", cast, session.pk))
    assert has_text(page, "Filters None: every photo of the case")
    assert has_text(page, "Photos that matched the filters 3")
    assert has_text(page, "Photos of this case the filters left out 0")
    assert not has_text(page, "The filters left out")


def test_a_session_prepared_before_the_counts_says_photos_may_be_missing(client, cast, missing):
    session = _session(cast, missing)
    Session.objects.filter(pk=session.pk).update(matched=None, left_out=None)
    client.force_login(cast.lead)
    page = client.get(_url("session", cast, session.pk))
    assert has_text(page, "Photos that matched the filters 3")
    assert has_text(page, "photos of the case that matched the filters may have been left out")


def _chosen(page, field_id):
    """The values of the options chosen, as the page comes, in the select ``field_id``."""
    html = page.content.decode()
    block = re.search(rf'<select [^>]*id="{field_id}"[^>]*>(.*?)</select>', html, re.S)[1]
    return re.findall(r'<option value="([^"]*)"[^>]*\bselected\b', block)


def test_the_identify_form_chooses_no_confidence_and_no_outcome(client, cast, missing):
    session = _session(cast, missing)
    first = session.candidates.first()
    services.show_candidate(actor=cast.lead, case=cast.case, candidate=first)
    client.force_login(cast.lead)
    page = client.get(_url("session", cast, session.pk))
    # Only the blank first choice: nothing is chosen for the family.
    assert _chosen(page, f"c{first.pk}-confidence") == [""]
    assert _chosen(page, f"c{first.pk}-status") == [""]
    typed = {"present": "The lead and the mother", "consent": "on", "notes": "the scar"}
    bad = client.post(_url("identify", cast, session.pk, first.pk), typed)
    assert bad.status_code == 400
    assert has_text(bad, "Choose how certain the family member is.")
    assert has_text(bad, "Choose what the victim's status becomes.")
    assert "The lead and the mother" in attrs(bad, "value", "input")
    assert has_text(bad, "the scar")
    assert Candidate.objects.get(pk=first.pk).identification is None
    assert Person.objects.get(pk=missing.victim.pk).victim_status != "identified"
    # Chosen, the rest as typed: recorded.
    done = client.post(
        _url("identify", cast, session.pk, first.pk),
        {**typed, "confidence": "probable", "status": "identified"},
    )
    assert done.status_code == 302
    assert Candidate.objects.get(pk=first.pk).identification.confidence == "probable"


def test_the_session_counts_read_in_arabic(client, cast, missing):
    session = _session(cast, missing)
    client.force_login(cast.lead)
    client.cookies["django_language"] = "ar"
    page = client.get(_url("session", cast, session.pk))
    assert has_text(page, "الصور التي طابقت المرشّحات 3")
    assert has_text(page, "الصور من 1 إلى 3 من أصل 3.")
