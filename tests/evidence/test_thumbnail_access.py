"""Thumbnails are served only through URLs an audited page gave to that user, and a
thumbnail lost from the store is made again from its original."""

import re
import time
from html import unescape
from pathlib import Path

import pytest
from django.urls import reverse

from casefiles.access import INVESTIGATOR_GROUP, Role
from casefiles.models import AuditEntry
from evidence import views
from evidence.models import Derivative
from evidence.storage import evidence_storage
from tests.evidence.helpers import take_in
from tests.evidence.images import jpeg_bytes
from tests.factories import CaseFactory, MembershipFactory, UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def photos(cast, tmp_path):
    files = {f"p{n}.jpg": jpeg_bytes(n) for n in range(3)}
    files["same-as-p0.jpg"] = jpeg_bytes(0, quality=70)  # near-identical to p0
    batch = take_in(cast.case, cast.investigator, files, tmp_path / "m")
    return {i.original_path: i for i in batch.items.select_related("original")}


def _thumbnail_urls(html):
    return {
        alt: unescape(src)
        for src, alt in re.findall(r'<img loading="lazy"[^>]* src="([^"]+)" alt="([^"]+)"', html)
    }


def _gallery_urls(client, cast):
    return _thumbnail_urls(
        client.get(reverse("evidence:gallery", args=[cast.case.reference])).content.decode()
    )


def _stored_thumbnail(item) -> Path:
    key = Derivative.objects.get(original=item.original, kind="thumbnail").storage_key
    return Path(evidence_storage().path(key))


def test_a_thumbnail_is_not_served_without_a_token_from_an_audited_page(client, cast, photos):
    item = photos["p1.jpg"]
    bare = reverse("evidence:thumbnail", args=[cast.case.reference, item.reference])
    client.force_login(cast.lawyer)
    assert client.get(bare).status_code == 403
    assert client.get(bare, {"t": "1abc:forged"}).status_code == 403
    assert not AuditEntry.objects.filter(action="evidence.gallery").exists()


def test_the_gallery_url_serves_its_user_only_and_never_another_case(client, cast, photos):
    item = photos["p1.jpg"]
    client.force_login(cast.lawyer)
    url = _gallery_urls(client, cast)[item.reference]
    response = client.get(url)
    assert response.status_code == 200 and response["Content-Type"] == "image/jpeg"
    assert b"".join(response.streaming_content) == _stored_thumbnail(item).read_bytes()
    # The token is for this item alone.
    other = reverse("evidence:thumbnail", args=[cast.case.reference, photos["p2.jpg"].reference])
    assert client.get(f"{other}?{url.split('?', 1)[1]}").status_code == 403

    client.force_login(cast.observer)  # a member of the case, but not given this URL
    assert client.get(url).status_code == 403

    stranger = UserFactory(username="stranger", groups=[INVESTIGATOR_GROUP])
    MembershipFactory(user=stranger, case=CaseFactory(), role=Role.INVESTIGATOR)
    client.force_login(stranger)  # a member of another case: the item does not exist
    assert client.get(url).status_code == 404


def test_a_token_goes_stale_after_a_few_hours(client, cast, photos, monkeypatch):
    item = photos["p1.jpg"]
    past = time.time() - views.THUMBNAIL_TOKEN_MAX_AGE - 60
    with monkeypatch.context() as m:
        m.setattr(time, "time", lambda: past)
        url = views.thumbnail_url(cast.lawyer, cast.case.reference, item.reference, item.pk)
    client.force_login(cast.lawyer)
    assert client.get(url).status_code == 403


def test_a_thumbnail_is_never_kept_in_the_browsers_cache(client, cast, photos):
    item = photos["p1.jpg"]
    url = views.thumbnail_url(cast.lawyer, cast.case.reference, item.reference, item.pk)
    client.force_login(cast.lawyer)
    response = client.get(url)
    assert response.status_code == 200
    assert "no-store" in response["Cache-Control"]


def test_the_item_page_names_the_near_identical_items_it_shows_and_serves_them(
    client, cast, photos
):
    item, twin = photos["p0.jpg"], photos["same-as-p0.jpg"]
    client.force_login(cast.lawyer)
    html = client.get(item.get_absolute_url()).content.decode()
    entry = AuditEntry.objects.get(action="evidence.view", target_id=str(item.pk))
    assert entry.details["near"] == [twin.reference]
    url = _thumbnail_urls(html)[twin.reference]
    assert client.get(url).status_code == 200
    client.get(photos["p1.jpg"].get_absolute_url())  # in no near-identical group
    lone = AuditEntry.objects.get(action="evidence.view", target_id=str(photos["p1.jpg"].pk))
    assert lone.details["near"] == []


def test_a_thumbnail_missing_from_the_store_is_made_again_from_its_original(client, cast, photos):
    item = photos["p2.jpg"]
    stored = _stored_thumbnail(item)
    made_at_intake = stored.read_bytes()
    stored.unlink()
    client.force_login(cast.lawyer)
    url = _gallery_urls(client, cast)[item.reference]
    response = client.get(url)
    assert response.status_code == 200 and response["Content-Type"] == "image/jpeg"
    assert response.content == made_at_intake  # the same steps, the same bytes
    assert stored.read_bytes() == made_at_intake  # back in the store for the next view
    assert b"".join(client.get(url).streaming_content) == made_at_intake


@pytest.mark.parametrize("damage", ["missing", "changed"])
def test_a_lost_thumbnail_of_an_unreadable_original_is_a_404_and_nothing_breaks(
    client, cast, photos, damage
):
    item = photos["p2.jpg"]
    _stored_thumbnail(item).unlink()
    original = Path(evidence_storage().path(item.original.storage_key))
    if damage == "missing":
        original.unlink()
    else:
        original.chmod(0o644)
        original.write_bytes(jpeg_bytes(99))
    client.force_login(cast.lawyer)
    url = _gallery_urls(client, cast)[item.reference]
    assert client.get(url).status_code == 404
    assert not _stored_thumbnail(item).exists()  # nothing made from what is not the original
    assert client.get(item.get_absolute_url()).status_code == 200
    assert client.get(_gallery_urls(client, cast)[photos["p1.jpg"].reference]).status_code == 200


def test_a_preview_missing_from_the_store_is_made_again(client, cast, photos):
    item = photos["p1.jpg"]
    url = reverse("evidence:preview", args=[cast.case.reference, item.reference])
    client.force_login(cast.lawyer)
    first = b"".join(client.get(url).streaming_content)
    key = Derivative.objects.get(original=item.original, kind="preview").storage_key
    Path(evidence_storage().path(key)).unlink()
    again = client.get(url)
    assert again.status_code == 200
    assert b"".join(again.streaming_content) == first
