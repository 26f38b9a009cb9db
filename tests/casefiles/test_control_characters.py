"""A NUL byte or another control character anywhere in a request (a URL segment, a query
parameter, a form field) is refused (404, or a form error), never a server error. On
PostgreSQL, text cannot hold NUL: one reaching a query raised ``DataError`` (500)."""

import re
from urllib.parse import quote

import pytest
from django.urls import reverse

from tests.casefiles import test_urls
from tests.casefiles.test_urls import _all_urls

values = test_urls.values  # a fixture: one object of each kind a case URL names

pytestmark = pytest.mark.django_db

CONTROLS = ["\x00", "\x01", "\x1b", "\x7f", "\x85"]
# Every name a URL pattern of the project gives a value, and a value for those the case
# objects do not name (the Django admin's object ids, an audit target, an action).
_OTHER = {"object_id": "1", "target_type": "evidence.evidenceitem", "target_id": "1"}


def _poisoned(values, control):
    names = set(values) | set(_OTHER) | {"pk", "action", "app_label", "model_name", "url"}
    plain = {**_OTHER, **values}
    return {name: quote(f"{plain.get(name, '1')}{control}", safe="") for name in names}


def _answers(client, url, **query):
    client.raise_request_exception = False
    response = client.get(url, query)
    assert response.status_code < 500, (url, query, response.status_code)
    return response.status_code


def test_every_url_pattern_refuses_a_control_character_in_each_segment(client, cast, values):
    urls = [url for url, _, _ in _all_urls(_poisoned(values, "\x00"))]
    assert sum("%00" in url for url in urls) > 40
    for user in (cast.investigator, cast.lead, cast.admin):
        client.force_login(user)
        for url in urls:
            status = _answers(client, url)
            if "/cases/" in url and "%00" in url:
                assert status == 404, url
    client.force_login(cast.lead)
    for control in CONTROLS[1:]:
        for url, _, is_case in _all_urls(_poisoned(values, control)):
            status = _answers(client, url)
            if is_case:
                assert status == 404, url


def test_a_case_reference_with_a_nul_is_not_found_however_it_is_written(client, cast):
    client.force_login(cast.lead)
    for ref in (f"{cast.case.reference}%00", "%00", f"{cast.case.reference}%00/evidence"):
        assert _answers(client, f"/cases/{ref}/") == 404


def _parameters(html):
    """The names a page's forms send, and those its links carry."""
    names = set(re.findall(r'<(?:input|select|textarea)[^>]* name="([^"]+)"', html))
    names |= set(re.findall(r"[?&amp;;]([a-z_]+)=", html))
    return names - {"csrfmiddlewaretoken"}


def test_a_control_character_in_any_query_parameter_of_a_list_page_is_no_error(
    client, cast, values
):
    from evidence.models import EvidenceItem
    from evidence.views import thumbnail_url

    item = EvidenceItem.objects.get(reference=values["item_ref"])
    ref = values["ref"]
    case_pages = {
        reverse("casefiles:case_list"): (),
        reverse("casefiles:case_target_audit", args=[ref, "evidence.evidenceitem", item.pk]): (
            "before",
        ),
        reverse("evidence:gallery", args=[ref]): ("after", "before"),
        reverse("evidence:batch_detail", args=[ref, values["pk"]]): (),
        reverse("evidence:identification_create", args=[ref, item.reference]): ("witness",),
        reverse("people:people_list", args=[ref]): ("page",),
        reverse("people:testimony_detail", args=[ref, values["testimony_id"]]): ("a", "b"),
    }
    admin_pages = {  # the audit log, accounts, access: a system admin's
        reverse("casefiles:audit_list"): ("after", "before"),
        reverse("casefiles:audit_export_csv"): (),
        reverse("casefiles:audit_export_jsonl"): (),
        reverse("access_requests"): (),
        reverse("manage_users"): ("page",),
        reverse("manage_expiring"): (),
    }
    checked = 0
    for user, pages in ((cast.lead, case_pages), (cast.admin, admin_pages)):
        client.force_login(user)
        for url, extra in pages.items():
            page = client.get(url)
            assert page.status_code == 200, url
            names = set(extra)
            if page.get("Content-Type", "").startswith("text/html"):
                names |= _parameters(page.content.decode())
            for name in sorted(names):
                _answers(client, url, **{name: "1\x00"})
                checked += 1
            _answers(client, url, **dict.fromkeys(names, "\x00\x1b[2J"))  # all at once
    thumbnail = thumbnail_url(cast.lead, ref, item.reference, item.pk)
    client.force_login(cast.lead)
    _answers(client, thumbnail.replace("t=", "t=%00"))
    assert checked > 30


def _post_forms(html):
    """The fields of each form on a page that posts: (action, names)."""
    for attrs, body in re.findall(r'<form([^>]*method="post"[^>]*)>(.*?)</form>', html, re.S):
        action = re.search(r'action="([^"]*)"', attrs)
        names = set(re.findall(r'<(?:input|select|textarea)[^>]* name="([^"]+)"', body))
        yield (action[1] if action else None), names - {"csrfmiddlewaretoken"}


def test_a_control_character_in_any_form_field_is_a_form_error_not_a_server_error(
    client, cast, values
):
    checked = 0
    signs_out = ("/logout/", "/sign-out-everywhere/")
    for user in (cast.investigator, cast.lead, cast.admin):
        client.force_login(user)
        posted = set()
        for url, _, _ in _all_urls(values):
            if url.startswith(("/admin/", "/accounts/login/")) or url.endswith(signs_out):
                continue
            client.raise_request_exception = False
            page = client.get(url)
            if page.status_code != 200 or "html" not in page.get("Content-Type", ""):
                continue
            for action, names in _post_forms(page.content.decode()):
                target = (action or url).replace("&amp;", "&")
                if target.endswith(signs_out) or target in posted:
                    continue
                posted.add(target)
                for name in sorted(names):
                    response = client.post(target, {name: "1\x00"})
                    assert response.status_code < 500, (target, name)
                    checked += 1
                response = client.post(target, dict.fromkeys(names, "\x00\x1b"))
                assert response.status_code < 500, (target, names)
        assert client.get(reverse("casefiles:case_list")).status_code == 200  # still signed in
    assert checked > 50


def test_a_nul_in_a_typed_field_is_refused_and_what_was_typed_is_kept(client, cast, values):
    client.force_login(cast.investigator)
    url = reverse("people:person_create", args=[values["ref"]])
    response = client.post(url, {"role": "witness", "name_ar": "ليلى\x00", "name_latin": "Layla"})
    assert response.status_code == 400  # the form again, with its errors
    html = response.content.decode()
    assert "Null characters are not allowed." in html and 'value="Layla"' in html
    response = client.post(reverse("request_access"), {"reference": "SYR\x00", "reason": "x"})
    html = response.content.decode()
    assert response.status_code == 200 and "Null characters are not allowed." in html
