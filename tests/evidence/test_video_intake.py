"""A video or a recording taken in through the real intake: stored byte for byte with its
hash, described into its provenance (the same position and date fields photos use, so
places, the gallery's place filter and the timeline pick it up), and flagged when it is
cut short, lies about its type or is empty."""

import pytest
from django.urls import reverse

from evidence.intake import steps
from evidence.models import EvidenceItem
from places.models import ItemLocation
from tests.evidence.conftest import sha256
from tests.evidence.helpers import item_flags, stored_bytes, take_in
from tests.evidence.images import jpeg_bytes
from tests.evidence.test_video_describe import recording

pytestmark = pytest.mark.django_db

HARASTA = "+33.5600+036.3650+700.000/"  # beside Harasta's military hospital


def _phone_video(tmp_path, name="IMG_0042.MOV", **extra):
    tags = {
        "com.apple.quicktime.location.ISO6709": HARASTA,
        "com.apple.quicktime.make": "Apple",
        "com.apple.quicktime.model": "iPhone 12",
        "com.apple.quicktime.creationdate": "2013-08-21T02:30:00+0300",
    }
    return recording(
        tmp_path / name,
        fmt="mov",
        tags=tags,
        options={"movflags": "use_metadata_tags"},
        rotation=-90,
        size=(192, 108),
        seconds=2,
        **extra,
    )


def _items(batch) -> dict[str, EvidenceItem]:
    return {i.original_filename: i for i in batch.items.select_related("original", "provenance")}


@pytest.mark.parametrize("limit", [steps.DECODE_LIMIT, 1024], ids=["in memory", "streamed"])
def test_a_phone_video_is_stored_described_and_placed(cast, tmp_path, monkeypatch, limit):
    """Small enough, it is described from the bytes in hand; larger than the decode
    limit, from its stored original (only its head is kept in memory)."""
    monkeypatch.setattr(steps, "DECODE_LIMIT", limit)
    video = _phone_video(tmp_path)
    batch = take_in(cast.case, cast.investigator, {"IMG_0042.MOV": video}, tmp_path / "card")
    item = _items(batch)["IMG_0042.MOV"]
    assert item.kind == "video" and item.original.media_type == "video/quicktime"
    assert item.original.sha256 == sha256(video) and stored_bytes(item) == video
    assert item.flags == []
    p = item.provenance
    assert (p.camera_make, p.camera_model) == ("Apple", "iPhone 12")
    assert p.taken_at == "2013-08-21T02:30:00+03:00"
    assert p.taken_date.isoformat() == "2013-08-21"  # the day where it was recorded
    assert (float(p.gps_latitude), float(p.gps_longitude)) == (33.56, 36.365)
    assert (p.width, p.height) == (108, 192)  # upright
    described = p.metadata["video"]
    assert described["gps"] == [33.56, 36.365, 700.0]
    assert described["duration_s"] == pytest.approx(2.0, abs=0.05)
    assert [s["codec"] for s in described["streams"]] == ["h264", "aac"]
    location = ItemLocation.objects.get(item=item)
    assert location.town_key == "harasta" and location.facility.code == "SY-FAC-HARASTA"


def test_a_video_s_place_and_day_show_in_the_gallery_timeline_and_item_page(client, cast, tmp_path):
    batch = take_in(
        cast.case, cast.investigator, {"IMG_0042.MOV": _phone_video(tmp_path)}, tmp_path / "m"
    )
    item = _items(batch)["IMG_0042.MOV"]
    client.force_login(cast.lawyer)
    located = ItemLocation.objects.get(item=item)
    gallery = client.get(
        reverse("evidence:gallery", args=[cast.case.reference]), {"place": located.facility.pk}
    )
    assert [i.reference for i in gallery.context["page"]] == [item.reference]
    timeline = client.get(reverse("incidents:case_timeline", args=[cast.case.reference]))
    assert timeline.status_code == 200 and "2013-08-21" in timeline.content.decode()
    for language in ("en", "ar"):
        page = client.get(item.get_absolute_url(), HTTP_ACCEPT_LANGUAGE=language)
        assert page.status_code == 200
        body = page.content.decode()
        assert "2013-08-21T02:30:00+03:00" in body and "33.56" in body and "iPhone 12" in body


def test_an_audio_recording_is_described(cast, tmp_path):
    audio = recording(tmp_path / "a.m4a", fmt="ipod", video=None, seconds=3, channels=1)
    batch = take_in(cast.case, cast.investigator, {"interview.m4a": audio}, tmp_path / "m")
    item = _items(batch)["interview.m4a"]
    assert item.kind == "audio" and item.flags == []
    (stream,) = item.provenance.metadata["audio"]["streams"]
    assert (stream["codec"], stream["channels"], stream["sample_rate"]) == ("aac", 1, 48000)
    assert item.provenance.metadata["audio"]["duration_s"] == pytest.approx(3.0, abs=0.05)
    assert item.provenance.width is None and item.provenance.gps_latitude is None


def test_cut_lying_and_empty_recordings_are_stored_hashed_and_flagged(cast, tmp_path):
    whole = _phone_video(tmp_path)
    mp4 = recording(tmp_path / "b.mp4", fmt="mp4")
    files = {
        "cut.mov": whole[: len(whole) // 2],  # its index was at the end: nothing plays
        "clip.jpg": mp4,  # a video named as a photo
        "photo.mp4": jpeg_bytes(7),  # a photo named as a video
        "empty.mp4": b"",
    }
    batch = take_in(cast.case, cast.investigator, files, tmp_path / "m")
    items = _items(batch)
    for name, data in files.items():
        assert stored_bytes(items[name]) == data and items[name].original.sha256 == sha256(data)
    cut = item_flags(items["cut.mov"])
    assert set(cut) == {"truncated", "no_decodable_stream"}
    assert "declares" in cut["truncated"] and items["cut.mov"].kind == "video"
    assert items["cut.mov"].provenance.metadata["video"]["problems"][0]["code"] == "truncated"

    clip = items["clip.jpg"]
    assert clip.kind == "video" and set(item_flags(clip)) == {"extension_mismatch"}
    assert clip.provenance.metadata["video"]["streams"][0]["codec"] == "h264"

    photo = items["photo.mp4"]
    assert photo.kind == "photo" and set(item_flags(photo)) == {"extension_mismatch"}
    assert "video" not in photo.provenance.metadata and photo.provenance.width

    assert set(item_flags(items["empty.mp4"])) == {"empty"}


def test_a_damaged_recording_page_shows_its_flags_in_both_languages(client, cast, tmp_path):
    whole = _phone_video(tmp_path)
    batch = take_in(
        cast.case, cast.investigator, {"cut.mov": whole[: len(whole) // 2]}, tmp_path / "m"
    )
    item = _items(batch)["cut.mov"]
    client.force_login(cast.lawyer)
    english = client.get(item.get_absolute_url()).content.decode()
    assert "Cut short: shorter than its container says" in english
    arabic = client.get(item.get_absolute_url(), HTTP_ACCEPT_LANGUAGE="ar").content.decode()
    assert "truncated</code> مقطوع: أقصر مما تقوله حاويته" in arabic
