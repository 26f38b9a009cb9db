"""The app's icon: linked by every page, and at /favicon.ico where browsers ask for it
unbidden (it was a 404 on every first visit)."""

import xml.etree.ElementTree as ET

import pytest

from tests.html import attrs

pytestmark = pytest.mark.django_db


def _body(response) -> bytes:
    return b"".join(response.streaming_content) if response.streaming else response.content


def test_favicon_ico_is_the_static_icon_before_anyone_signs_in(client):
    response = client.get("/favicon.ico")
    assert response.status_code == 302
    assert response["Location"] == "/static/favicon.ico"
    icon = client.get(response["Location"])
    assert icon.status_code == 200
    assert _body(icon)[:4] == b"\x00\x00\x01\x00"  # an ICO file's header


def test_every_page_links_an_svg_icon_and_the_ico_and_both_are_served(client):
    page = client.get("/accounts/login/")
    assert page.status_code == 200
    icons = attrs(page, "href", tag="link")
    assert "/static/favicon.svg" in icons and "/static/favicon.ico" in icons
    svg = client.get("/static/favicon.svg")
    assert svg.status_code == 200
    assert svg["Content-Type"].startswith("image/svg+xml")
    # Our own file, read back: not untrusted input.
    assert ET.fromstring(_body(svg)).tag == "{http://www.w3.org/2000/svg}svg"  # noqa: S314
