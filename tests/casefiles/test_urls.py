"""Walk every URL pattern of the project: login is required everywhere but on the
sign-in page, the language switch and static files; outsiders get 404 on case URLs."""

import re

import pytest
from django.conf import settings
from django.urls import URLPattern, URLResolver, get_resolver, reverse
from django.urls.resolvers import RegexPattern, RoutePattern

from tests.evidence.helpers import take_in
from tests.evidence.images import jpeg_bytes

pytestmark = pytest.mark.django_db

PUBLIC = {
    "login",
    "set_language",
    # A forgotten password: the recovery code two admins issued, then a new password
    # (tests/casefiles/test_recovery.py). They sign nobody in.
    "recover",
    "recover_password",
    # The security-key half of the second sign-in step, and its script's messages: they
    # run before sign-in, and refuse unless the password step just succeeded
    # (tests/casefiles/test_security_keys.py).
    "credential-authentication-begin",
    "credential-authentication-complete",
    "js-i18n-catalog",
    # A redirect to the static icon, which browsers ask for before anyone signs in.
    "favicon",
    # The organisation's public signing keys, for verifiers (tests/casefiles/test_signing_keys.py).
    "signing_keys_json",
}
_CONVERTER = re.compile(r"<(?:(?P<conv>\w+):)?(?P<name>\w+)>")
_GROUP = re.compile(r"\(\?P<(?P<name>\w+)>(?P<body>[^()]*)\)")


def _example(pattern, values):
    """A concrete URL piece matching one pattern; known kwargs name real objects."""
    if isinstance(pattern, RoutePattern):
        return _CONVERTER.sub(lambda m: str(values.get(m["name"], "1")), str(pattern._route))
    assert isinstance(pattern, RegexPattern)

    def group(m):
        alternatives = m["body"].split("|")
        return alternatives[0] if re.fullmatch(r"[\w-]+", alternatives[0]) else "1"

    piece = _GROUP.sub(group, pattern._regex).lstrip("^").rstrip("$")
    return piece.replace("\\", "")


def _walk(resolver, values, prefix="", names=()):
    for p in resolver.url_patterns:
        url = prefix + _example(p.pattern, values)
        if isinstance(p, URLResolver):
            yield from _walk(p, values, url, (*names, p.namespace))
        else:
            assert isinstance(p, URLPattern)
            yield "/" + url, p.name, "ref" in str(p.pattern)


def _all_urls(values):
    return list(_walk(get_resolver(), values))


@pytest.fixture
def values(cast, tmp_path):
    """One object of each kind a case URL can name, in ``cast.case``: the URL kwargs."""
    from django.utils import timezone

    from casefiles.models import Membership
    from people import services
    from tests.factories import register_person

    batch = take_in(cast.case, cast.lead, {"a.jpg": jpeg_bytes(1)}, tmp_path / "m")
    person = register_person(cast.case, cast.investigator)
    testimony = services.create_testimony(
        actor=cast.investigator,
        case=cast.case,
        witness=person,
        text="Statement.",
        taken_at=timezone.now(),
        language="en",
        mode="in_person",
    )
    consent = services.record_consent(
        actor=cast.investigator,
        case=cast.case,
        person=person,
        scopes=["investigation"],
        how="written",
        given_on=timezone.now().date(),
    )
    from legal.models import LegalElement
    from legal.services import links

    link = links.link_to_element(
        actor=cast.lawyer,
        case=cast.case,
        record=testimony,
        element=LegalElement.objects.get(code="RS-7-1-f.1"),
        stance="supports",
        proposition="He describes the beatings.",
    )
    from legal.services import bulk, searches

    item = batch.items.get()
    from incidents.services import incidents
    from vocabularies.models import Term

    incident = incidents.create_incident(actor=cast.lead, case=cast.case, title_en="Arrest")
    victim = register_person(cast.case, cast.investigator, role="victim")
    act = incidents.add_act(
        actor=cast.lead,
        incident=incident,
        victim=victim,
        act_type=Term.objects.get(scheme="act_type", code="030101000000"),
    )
    incident_link = incidents.link_record(actor=cast.lead, incident=incident, record=item)
    from missing.models import Antemortem
    from missing.services import missing as missing_services

    profile = missing_services.save_profile(
        actor=cast.lead, case=cast.case, person=person, values=Antemortem()
    )
    session = missing_services.prepare_session(
        actor=cast.lead, case=cast.case, profile=profile, family_member=victim
    )
    search = searches.save_search(actor=cast.lead, case=cast.case, name="All", query="")
    job = bulk.start_bulk(
        actor=cast.lead,
        case=cast.case,
        action="tag_add",
        values={"tag": "seen"},
        selection=[item.pk],
        through=item.pk,
    )
    from disclosure.services import redact_item, request_package

    redaction = redact_item(actor=cast.lead, item=item, regions=[[0, 0, 5, 5]], reason="A face.")

    package = request_package(
        actor=cast.lawyer, case=cast.case, recipient="A court", purpose="investigation"
    )
    return {
        "ref": cast.case.reference,
        "package_id": str(package.pk),
        "redaction_id": str(redaction.pk),
        "item_ref": item.reference,
        "search_id": str(search.pk),
        "job_id": str(job.pk),
        "link_id": str(link.pk),
        "element_code": link.element.code,
        "pk": batch.pk,
        "code": person.code,
        "testimony_id": str(testimony.pk),
        "consent_id": str(consent.pk),
        "membership_id": str(Membership.objects.get(user=cast.observer).pk),
        "incident_ref": incident.reference,
        "act_id": str(act.pk),
        "incident_link_id": str(incident_link.pk),
        "session_id": str(session.pk),
        "candidate_id": str(session.candidates.get().pk),
    }


def test_the_walk_sees_the_whole_site(case):
    urls = _all_urls({"ref": case.reference})
    names = {name for _, name, _ in urls}
    assert {"login", "logout", "case_list", "case_detail", "audit_list", "index"} <= names
    assert len(urls) > 30  # the Django admin's patterns are walked too


def test_every_page_but_sign_in_requires_login(client, case):
    login_url = reverse(settings.LOGIN_URL)
    checked = 0
    for url, name, _ in _all_urls({"ref": case.reference}):
        if name in PUBLIC:
            continue
        response = client.get(url, follow=True)
        assert response.redirect_chain, (url, response.status_code)
        assert response.redirect_chain[-1][0].startswith(login_url), (url, response.redirect_chain)
        assert response.status_code == 200
        checked += 1
    assert checked > 30


def test_public_pages_open_without_login(client):
    assert client.get(reverse("login")).status_code == 200
    response = client.post(reverse("set_language"), {"language": "ar", "next": "/cases/"})
    assert (response.status_code, response["Location"]) == (302, "/cases/")
    assert client.get("/static/css/athar.css").status_code in (200, 304)


def test_outsiders_get_404_on_every_case_url(client, cast, values):
    case_urls = [(url, name) for url, name, is_case in _all_urls(values) if is_case]
    assert len(case_urls) >= 8
    client.force_login(cast.outsider)
    for url, _ in case_urls:
        assert client.get(url).status_code == 404, url
    # The same URLs work for a member who may do everything in the case (405: POST only),
    # so the outsider's 404 is the policy speaking, not a broken URL.
    # A thumbnail needs the token its audited page gives (403 without it, being a member).
    client.force_login(cast.lead)
    for url, name in case_urls:
        if name == "thumbnail":
            assert client.get(url).status_code == 403, url
            url = _with_thumbnail_token(cast.lead, values)
        if name in ("package_download", "package_report"):  # the walk's package is not built
            assert client.get(url).status_code == 404, url
            continue
        assert client.get(url).status_code in (200, 405), url


def _with_thumbnail_token(user, values):
    from evidence.models import EvidenceItem
    from evidence.views import thumbnail_url

    item = EvidenceItem.objects.get(case__reference=values["ref"], reference=values["item_ref"])
    return thumbnail_url(user, values["ref"], item.reference, item.pk)


def test_members_get_404_for_case_objects_that_do_not_exist(client, cast, values):
    client.force_login(cast.lead)
    named = {k: "NO-SUCH" if k in ("code", "item_ref") else "999999" for k in values if k != "ref"}
    real = _all_urls(values)
    missing = _all_urls({**values, **named})
    checked = 0
    for (real_url, name, is_case), (missing_url, _, _) in zip(real, missing, strict=True):
        if is_case and real_url != missing_url and name != "case_target_audit":
            assert client.get(missing_url).status_code == 404, missing_url
            checked += 1
    assert checked >= len(named)


# A case's access pages: a system admin manages who is in any case, and is shown its
# reference, title and members there, never its content.
ACCESS_MANAGEMENT = {"case_members", "membership_change"}


def test_a_system_admin_who_is_no_member_gets_404_on_case_urls(client, cast, values):
    client.force_login(cast.admin)
    for url, name, is_case in _all_urls(values):
        if is_case and name not in ACCESS_MANAGEMENT:
            assert client.get(url).status_code == 404, url
        elif name in ACCESS_MANAGEMENT:
            page = client.get(url)
            assert page.status_code in (200, 404), url
            assert cast.case.summary not in page.content.decode()


def test_a_404_looks_the_same_for_an_unknown_and_a_forbidden_case(client, cast):
    client.force_login(cast.outsider)
    forbidden = client.get(reverse("casefiles:case_detail", args=[cast.case.reference]))
    unknown = client.get(reverse("casefiles:case_detail", args=["NO-SUCH-CASE"]))
    assert forbidden.status_code == unknown.status_code == 404

    def page(response, path):
        # Only the per-response CSRF mask and the page's own path may differ.
        html = response.content.decode().replace(path, "PATH")
        return re.sub(r'name="csrfmiddlewaretoken" value="\w+"', "CSRF", html)

    assert page(forbidden, cast.case.reference) == page(unknown, "NO-SUCH-CASE")
    assert cast.case.title.encode() not in forbidden.content
