"""Graphic evidence: marked one item or a selection at a time, or a whole batch at intake;
shown only blurred (a greyscale derivative made on the server) until a member reveals it
on its page, which is audited; a preference keeps every list blurred."""

import hashlib
import io
import re
from collections import deque
from html.parser import HTMLParser
from urllib.parse import urldefrag, urljoin, urlsplit

import pytest
from django.core.exceptions import PermissionDenied
from django.urls import reverse
from django.utils import timezone
from PIL import Image

from accounts.models import Preferences
from casefiles.models import AuditEntry
from evidence import graphic, services, views
from evidence.imaging import BLUR_PARAMETERS, TOOL, blur
from evidence.intake.pipeline import ingest_path
from evidence.models import Derivative, EvidenceItem
from evidence.storage import evidence_storage
from people import services as people_services
from people.models import Identity
from tests.evidence.helpers import stored_bytes, take_in
from tests.evidence.images import jpeg_bytes, write
from tests.evidence.test_protected_attachments import _attach, _witness_and_testimony

pytestmark = pytest.mark.django_db


def _take_in_graphic(case, actor, files, where):
    for name, data in files.items():
        write(where / name, data)
    return ingest_path(
        actor=actor, case=case, path=where, acquired_from="W-0001", jobs=1, graphic=True
    ).batch


def _body(response) -> bytes:
    return b"".join(response.streaming_content) if response.streaming else response.content


def _derivative_bytes(item, kind) -> bytes:
    key = Derivative.objects.get(original=item.original, kind=kind).storage_key
    with evidence_storage().open(key) as fh:
        return fh.read()


@pytest.fixture
def world(cast, tmp_path):
    """A plain photo and, in a batch taken in as graphic, a near-identical photo of it (so
    the plain photo's page shows it among its near-identical items) and another one, the
    latter attached to a testimony, given by a witness and identified in."""
    plain = take_in(cast.case, cast.investigator, {"plain.jpg": jpeg_bytes(0)}, tmp_path / "a")
    batch = _take_in_graphic(
        cast.case,
        cast.investigator,
        {"body.jpg": jpeg_bytes(0, quality=70), "cell.jpg": jpeg_bytes(7)},
        tmp_path / "b",
    )
    items = {i.original_path: i for i in EvidenceItem.objects.select_related("original")}
    testimony = _witness_and_testimony(cast, "standard")
    cell = _attach(cast.lead, items["cell.jpg"], testimony, "Cell, north wall")
    services.update_item(
        actor=cast.lead, item=cell, tags=[], source_person=testimony.witness, title=cell.title
    )
    victim = people_services.register_person(
        actor=cast.lead,
        case=cast.case,
        role="victim",
        identity=Identity(name_ar="سامر"),
        protection_level="standard",
    )
    services.record_identification(
        actor=cast.lead,
        item=cell,
        witness=testimony.witness,
        identified=victim,
        confidence="probable",
        method="photo",
        identified_on=timezone.now().date(),
    )
    # A lawyer links the graphic photo to an element: the matrix and the element's page
    # list it (by reference; no picture of it must be one a click shows unblurred).
    from legal.models import LegalElement
    from legal.services import links

    links.link_to_element(
        actor=cast.lawyer,
        case=cast.case,
        record=items["body.jpg"],
        element=LegalElement.objects.get(code="RS-7-1-f.1"),
        stance="supports",
        proposition="Ligature marks on both wrists.",
    )
    return {
        "plain": items["plain.jpg"],
        "body": items["body.jpg"],
        "cell": EvidenceItem.objects.select_related("original").get(pk=cell.pk),
        "plain_batch": plain,
        "batch": batch,
        "testimony": testimony,
        "witness": testimony.witness,
        "victim": victim,
    }


# -- every URL of every page, fetched ---------------------------------------------------
class _Links(HTMLParser):
    """Every URL an HTML page names: src, href, srcset, action, data-* attributes, a meta
    refresh, and CSS url() in style attributes and style elements."""

    def __init__(self):
        super().__init__()
        self.urls: list[str] = []
        self._in_style = False

    def handle_starttag(self, tag, attrs):
        self._in_style = tag == "style"
        for name, value in attrs:
            if not value:
                continue
            if name in ("src", "href", "action", "poster", "data") or name.startswith("data-"):
                self.urls.append(value)
            elif name in ("srcset", "imagesrcset"):
                self.urls += [part.strip().split()[0] for part in value.split(",") if part.strip()]
            elif name == "style":
                self.urls += _css_urls(value)
            elif name == "content" and "url=" in value.lower():
                self.urls.append(value.split("=", 1)[1].strip())

    def handle_data(self, data):
        if self._in_style:
            self.urls += _css_urls(data)


def _css_urls(css: str) -> list[str]:
    return [u.strip("'\" ") for u in re.findall(r"url\(([^)]*)\)", css)]


def _crawl(client, start: list[str], depth: int = 2, limit: int = 600) -> dict[str, object]:
    """GET every same-site URL reachable from ``start`` (``depth`` links deep): url ->
    response. Each page's links are read from its HTML or CSS; redirects are followed."""
    seen: dict[str, object] = {}
    queue = deque((url, 0) for url in start)
    while queue and len(seen) < limit:
        url, level = queue.popleft()
        url = urldefrag(url)[0]
        if url in seen:
            continue
        response = client.get(url)
        seen[url] = response
        if level >= depth:
            continue
        kind = response.get("Content-Type", "")
        found: list[str] = []
        if "Location" in response:
            found.append(response["Location"])
        if kind.startswith("text/html"):
            parser = _Links()
            parser.feed(_body(response).decode("utf-8", "replace"))
            found += parser.urls
        elif kind.startswith("text/css"):
            found += _css_urls(_body(response).decode("utf-8", "replace"))
        for link in found:
            absolute = urljoin(f"http://testserver{url}", link)
            parts = urlsplit(absolute)
            if parts.scheme in ("http", "https") and parts.netloc == "testserver":
                queue.append((parts.path + (f"?{parts.query}" if parts.query else ""), level + 1))
    return seen


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _start_pages(cast, world) -> list[str]:
    ref = cast.case.reference
    gallery = reverse("evidence:gallery", args=[ref])
    return [
        gallery,
        f"{gallery}?batch={world['batch'].pk}",
        f"{gallery}?near_group={world['body'].near_group}",
        f"{gallery}?flagged=false",
        world["batch"].get_absolute_url(),
        world["plain_batch"].get_absolute_url(),
        world["plain"].get_absolute_url(),  # its near-identical items: the graphic one
        world["body"].get_absolute_url(),
        world["cell"].get_absolute_url(),
        reverse("people:person_detail", args=[ref, world["witness"].code]),
        reverse("people:person_detail", args=[ref, world["victim"].code]),
        reverse("people:testimony_detail", args=[ref, world["testimony"].pk]),
        cast.case.get_absolute_url(),
        reverse("legal:matrix", args=[ref]),
        reverse("legal:element_links", args=[ref, "RS-7-1-f.1"]),
        reverse("legal:workspace", args=[ref]),
        f"{reverse('legal:workspace', args=[ref])}?near_group={world['body'].near_group}",
    ]


def test_no_page_gives_a_url_that_shows_a_graphic_item_unblurred(client, cast, world):
    graphic_items = [world["body"], world["cell"]]
    assert world["body"].near_group is not None
    assert world["body"].near_group == world["plain"].near_group
    # The real pictures of the graphic items, every one there is: thumbnail, preview
    # (made now, as a first view would), original.
    real = {}
    for item in graphic_items:
        services.ensure_preview(item)
        for kind in ("thumbnail", "preview"):
            real[_digest(_derivative_bytes(item, kind))] = f"{item.reference} {kind}"
        real[_digest(stored_bytes(item))] = f"{item.reference} original"
    services.ensure_preview(world["plain"])
    plain = {
        _digest(_derivative_bytes(world["plain"], "thumbnail")),
        _digest(_derivative_bytes(world["plain"], "preview")),
        _digest(stored_bytes(world["plain"])),
    }

    client.force_login(cast.lead)  # who sees the most: every link, the downloads too
    fetched = _crawl(client, _start_pages(cast, world))

    thumbnails = [u for u in fetched if "/thumbnail/" in u]
    assert {u.split("/")[-3] for u in thumbnails} >= {i.reference for i in graphic_items}
    pictures = 0
    for url, response in fetched.items():
        body = _body(response)
        assert _digest(body) not in real, f"{url} serves {real.get(_digest(body))}"
        if url.startswith("/static/"):
            continue  # the app's own files (its icon): no evidence
        if response.get("Content-Type", "").startswith("image/") and _digest(body) not in plain:
            pictures += 1  # a picture not of the plain item: a blurred one, greyscale
            assert Image.open(io.BytesIO(body)).mode == "L", url
    assert pictures >= 2

    # Revealed on its page: audited, and its page shows the real preview.
    body = world["body"]
    response = client.post(reverse("evidence:reveal", args=[cast.case.reference, body.reference]))
    assert response.status_code == 302
    entry = AuditEntry.objects.get(action="evidence.graphic_reveal")
    assert (entry.actor, entry.target_id) == (cast.lead, str(body.pk))
    page = client.get(body.get_absolute_url()).content.decode()
    preview = reverse("evidence:preview", args=[cast.case.reference, body.reference])
    assert f'src="{preview}"' in page
    assert _body(client.get(preview)) == _derivative_bytes(body, "preview")
    # The other graphic item is still blurred everywhere.
    other = reverse("evidence:preview", args=[cast.case.reference, world["cell"].reference])
    assert _digest(_body(client.get(other))) not in real


def test_the_item_page_warns_and_embeds_no_picture_until_revealed(client, cast, world):
    body = world["body"]
    client.force_login(cast.investigator)
    page = client.get(body.get_absolute_url()).content.decode()
    assert "Graphic content" in page and "Show the picture" in page
    assert "<img" not in page.split('id="picture"')[1].split("</figure>")[0]
    assert reverse("evidence:download", args=[cast.case.reference, body.reference]) not in page

    client.post(reverse("evidence:reveal", args=[cast.case.reference, body.reference]))
    page = client.get(body.get_absolute_url()).content.decode()
    assert "Show the picture" not in page
    assert reverse("evidence:preview", args=[cast.case.reference, body.reference]) in page
    assert reverse("evidence:download", args=[cast.case.reference, body.reference]) in page


def test_a_reveal_is_for_one_item_one_user_and_a_while(client, cast, world, monkeypatch):
    body, cell = world["body"], world["cell"]
    ref = cast.case.reference
    real_preview = _real_preview(body)

    def preview_of(item):
        return _body(client.get(reverse("evidence:preview", args=[ref, item.reference])))

    client.force_login(cast.lawyer)
    assert preview_of(body) != real_preview
    assert Image.open(io.BytesIO(preview_of(body))).mode == "L"
    client.post(reverse("evidence:reveal", args=[ref, body.reference]))
    assert preview_of(body) == real_preview
    assert Image.open(io.BytesIO(preview_of(cell))).mode == "L"  # another item: still blurred

    client.force_login(cast.observer)  # another user: not revealed for them
    assert preview_of(body) != real_preview

    client.force_login(cast.lawyer)  # a new session: the reveal does not carry over
    assert preview_of(body) != real_preview
    client.post(reverse("evidence:reveal", args=[ref, body.reference]))
    assert preview_of(body) == real_preview
    later = graphic.time.time() + graphic.REVEAL_SECONDS + 1
    monkeypatch.setattr(graphic.time, "time", lambda: later)
    assert preview_of(body) != real_preview  # it lasts a while, then it is blurred again


def _real_preview(item) -> bytes:
    services.ensure_preview(item)  # made as a first view would
    return _derivative_bytes(item, "preview")


def test_the_blur_guard_answers_the_thumbnail_url_itself(client, cast, world):
    """The gallery's own URL for a graphic item: blurred before the reveal, real after it,
    and blurred again for a user who keeps graphic images blurred."""
    body = world["body"]
    ref = cast.case.reference
    client.force_login(cast.lawyer)
    client.get(reverse("evidence:gallery", args=[ref]))  # the audited page gives the URL
    url = views.thumbnail_url(cast.lawyer, ref, body.reference, body.pk)
    real = _derivative_bytes(body, "thumbnail")
    blurred = _body(client.get(url))
    assert blurred == _derivative_bytes(body, "blurred") != real

    client.post(reverse("evidence:reveal", args=[ref, body.reference]))
    assert _body(client.get(url)) == real

    client.post(reverse("own_preferences"), {"blur_graphic": "on"})
    assert _body(client.get(url)) == blurred  # the preference wins on lists
    preview = reverse("evidence:preview", args=[ref, body.reference])
    assert Image.open(io.BytesIO(_body(client.get(preview)))).mode != "L"  # not on its page


def test_gallery_and_lists_label_graphic_items(client, cast, world):
    ref = cast.case.reference
    client.force_login(cast.lead)
    gallery = client.get(reverse("evidence:gallery", args=[ref])).content.decode()
    assert gallery.count('class="graphic-label"') == 2
    workspace = client.get(reverse("legal:workspace", args=[ref])).content.decode()
    assert workspace.count('class="graphic-label"') == 2
    testimony = client.get(
        reverse("people:testimony_detail", args=[ref, world["testimony"].pk])
    ).content.decode()
    assert 'class="graphic-label"' in testimony
    person = client.get(
        reverse("people:person_detail", args=[ref, world["witness"].code])
    ).content.decode()
    assert person.count('class="graphic-label"') == 2  # the item given, the identification
    plain = client.get(world["plain"].get_absolute_url()).content.decode()
    assert plain.count('class="graphic-label"') == 1  # its near-identical graphic photo


def test_a_withheld_graphic_item_is_not_labelled(client, cast, world):
    """A label says something of what an item shows: not of an item withheld from you."""
    critical = _witness_and_testimony(cast, "critical")
    _attach(cast.lead, world["body"], critical, "Scan")
    client.force_login(cast.observer)
    gallery = client.get(reverse("evidence:gallery", args=[cast.case.reference])).content
    assert gallery.decode().count('class="graphic-label"') == 1  # the cell photo only
    workspace = client.get(reverse("legal:workspace", args=[cast.case.reference])).content
    assert workspace.decode().count('class="graphic-label"') == 1


# -- marking -------------------------------------------------------------------------------
@pytest.fixture
def photos(cast, tmp_path):
    files = {f"p{n}.jpg": jpeg_bytes(n + 20) for n in range(4)}
    batch = take_in(cast.case, cast.investigator, files, tmp_path / "m")
    return list(batch.items.select_related("original").order_by("reference"))


@pytest.mark.parametrize("who", ["lead", "investigator", "lawyer"])
def test_members_who_add_or_review_evidence_mark_it_graphic(cast, photos, who):
    refs = services.set_graphic(
        actor=getattr(cast, who), case=cast.case, items=photos[:1], graphic=True
    )
    assert refs == [photos[0].reference]
    assert EvidenceItem.objects.get(pk=photos[0].pk).is_graphic


@pytest.mark.parametrize("who", ["observer", "outsider", "admin"])
def test_others_may_not_mark_evidence_graphic(cast, photos, who):
    with pytest.raises(PermissionDenied):
        services.set_graphic(actor=getattr(cast, who), case=cast.case, items=photos)
    assert not EvidenceItem.objects.filter(is_graphic=True).exists()
    assert not AuditEntry.objects.filter(action__startswith="evidence.graphic").exists()


def test_an_item_of_another_case_or_withheld_is_refused_and_nothing_changes(
    cast, photos, other_case
):
    from tests.evidence.factories import EvidenceItemFactory

    stranger = EvidenceItemFactory(case=other_case)
    with pytest.raises(ValueError, match="belong to the case"):
        services.set_graphic(actor=cast.lead, case=cast.case, items=[photos[0], stranger])
    critical = _witness_and_testimony(cast, "critical")
    _attach(cast.lead, photos[1], critical, "Scan")
    with pytest.raises(PermissionDenied):  # the investigator may not read that statement
        services.set_graphic(actor=cast.investigator, case=cast.case, items=photos)
    assert not EvidenceItem.objects.filter(is_graphic=True).exists()


def test_one_entry_names_every_item_a_selection_changed(cast, photos):
    services.set_graphic(actor=cast.lead, case=cast.case, items=photos[1:2])
    selection = EvidenceItem.objects.filter(case=cast.case)  # a queryset, as a filter gives
    refs = services.set_graphic(actor=cast.lawyer, case=cast.case, items=selection)
    assert refs == [p.reference for p in photos if p != photos[1]]  # not the one already so
    entry = AuditEntry.objects.filter(action="evidence.graphic_mark").latest("seq")
    assert (entry.actor, entry.case, entry.target_id) == (cast.lawyer, cast.case, "")
    assert entry.details["items"] == refs
    assert services.set_graphic(actor=cast.lawyer, case=cast.case, items=selection) == []
    assert AuditEntry.objects.filter(action="evidence.graphic_mark").count() == 2

    refs = services.set_graphic(actor=cast.lead, case=cast.case, items=selection, graphic=False)
    assert refs == [p.reference for p in photos]
    entry = AuditEntry.objects.get(action="evidence.graphic_unmark")
    assert entry.details["items"] == refs
    assert not EvidenceItem.objects.filter(is_graphic=True).exists()


def test_the_item_page_marks_and_unmarks_it(client, cast, photos):
    item = photos[0]
    url = reverse("evidence:mark_graphic", args=[cast.case.reference, item.reference])
    client.force_login(cast.observer)
    assert "Mark graphic" not in client.get(item.get_absolute_url()).content.decode()
    assert client.post(url, {"graphic": "1"}).status_code == 403

    client.force_login(cast.lawyer)
    assert "Mark graphic" in client.get(item.get_absolute_url()).content.decode()
    assert client.post(url, {"graphic": "1"}).status_code == 302
    entry = AuditEntry.objects.get(action="evidence.graphic_mark")
    assert (entry.target_id, entry.details["items"]) == (str(item.pk), [item.reference])
    page = client.get(item.get_absolute_url()).content.decode()
    assert "Show the picture" in page and "Unmark graphic" in page
    client.post(url, {"graphic": "0"})
    assert not EvidenceItem.objects.get(pk=item.pk).is_graphic


def test_an_item_marked_later_gets_its_blurred_thumbnail_on_first_request(client, cast, photos):
    item = photos[0]
    services.set_graphic(actor=cast.lead, case=cast.case, items=[item])
    assert not Derivative.objects.filter(kind="blurred").exists()  # not made by the mark
    client.force_login(cast.lead)
    client.get(reverse("evidence:gallery", args=[cast.case.reference]))
    url = views.thumbnail_url(cast.lead, cast.case.reference, item.reference, item.pk)
    served = _body(client.get(url))
    made = Derivative.objects.get(original=item.original, kind="blurred")
    assert (made.tool, made.parameters) == (TOOL, BLUR_PARAMETERS)
    assert (made.width, made.height) == (256, 192) and made.size == len(served)
    assert _derivative_bytes(item, "blurred") == served
    assert _body(client.get(url)) == served  # then served as stored


def test_the_blur_leaves_nothing_to_make_out():
    """A checkerboard of 16 px squares and a bar on a white ground: greyscale, the
    squares gone to one grey, at the thumbnail's size."""
    img = Image.new("RGB", (256, 192), "white")
    for x in range(0, 256, 16):
        for y in range(0, 192, 16):
            if (x + y) // 16 % 2:
                img.paste((200, 30, 30), (x, y, x + 16, y + 16))
    made = blur(img)
    assert made.mode == "L" and made.size == img.size
    centre = made.crop((32, 32, 224, 160))
    low, high = centre.getextrema()
    assert high - low <= 8  # the original spans 0 to 255 in every 32 px


# -- intake ------------------------------------------------------------------------------------
def test_ingest_graphic_marks_every_item_as_it_is_written(ingest, case, tmp_path):
    medium = tmp_path / "card"
    for n in range(3):
        write(medium / f"{n}.jpg", jpeg_bytes(n))
    write(medium / "notes.txt", b"not a picture")
    code, out, _ = ingest(medium, "--graphic")
    assert code == 0 and "every item marked graphic" in out
    items = EvidenceItem.objects.filter(case=case)
    assert items.count() == 4 and all(i.is_graphic for i in items)
    assert items.first().batch.graphic
    blurred = Derivative.objects.filter(kind="blurred", original__items__case=case)
    assert blurred.count() == 3  # the pictures; a text file has no picture to blur
    assert all((d.tool, d.parameters) == (TOOL, BLUR_PARAMETERS) for d in blurred)
    opened = AuditEntry.objects.get(action="evidence.batch_open")
    assert opened.details["graphic"] is True
    # Marked as the rows were written: no mark afterwards.
    assert not AuditEntry.objects.filter(action="evidence.graphic_mark").exists()


def test_ingest_without_graphic_marks_nothing_and_a_resume_with_it_marks_the_batch(
    ingest, case, tmp_path
):
    medium = tmp_path / "card"
    write(medium / "0.jpg", jpeg_bytes(0))
    assert ingest(medium)[0] == 0
    assert not EvidenceItem.objects.filter(is_graphic=True).exists()
    assert not Derivative.objects.filter(kind="blurred").exists()
    write(medium / "1.jpg", jpeg_bytes(1))
    assert ingest(medium, "--graphic")[0] == 0  # the same batch, resumed
    items = EvidenceItem.objects.filter(case=case).order_by("reference")
    assert [i.is_graphic for i in items] == [True, True]
    entry = AuditEntry.objects.get(action="evidence.graphic_mark")
    assert entry.details["items"] == [items[0].reference]  # the one taken in before
    assert entry.target_type == "evidence.intakebatch"


def test_the_upload_form_takes_a_batch_in_as_graphic(client, cast):
    from django.core.files.uploadedfile import SimpleUploadedFile

    client.force_login(cast.investigator)
    response = client.post(
        reverse("evidence:upload", args=[cast.case.reference]),
        {
            "files": [SimpleUploadedFile("a.jpg", jpeg_bytes(1), content_type="image/jpeg")],
            "acquired_from": "W-0001",
            "graphic": "on",
        },
    )
    assert response.status_code == 302
    item = EvidenceItem.objects.get(case=cast.case)
    assert item.is_graphic and item.batch.graphic
    assert Derivative.objects.filter(original=item.original, kind="blurred").exists()


# -- the preference ------------------------------------------------------------------------
def test_the_preference_is_set_on_the_users_own_page_and_audited(client, cast):
    client.force_login(cast.lawyer)
    page = client.get(reverse("security")).content.decode()
    assert "Always blur graphic images" in page and 'name="blur_graphic"' in page
    assert "checked" not in page.split('name="blur_graphic"')[0].rsplit("<input", 1)[-1]
    assert client.post(reverse("own_preferences"), {"blur_graphic": "on"}).status_code == 302
    assert Preferences.blurs_graphic(cast.lawyer)
    assert not Preferences.blurs_graphic(cast.lead)
    entry = AuditEntry.objects.get(action="auth.preferences")
    assert (entry.actor, entry.details["blur_graphic"]) == (cast.lawyer, True)
    page = client.get(reverse("security")).content.decode()
    assert "checked" in page.split('name="blur_graphic"')[1].split(">")[0]
    client.post(reverse("own_preferences"), {"blur_graphic": "on"})  # no change: no entry
    client.post(reverse("own_preferences"), {})
    assert not Preferences.blurs_graphic(cast.lawyer)
    assert AuditEntry.objects.filter(action="auth.preferences").count() == 2


def test_with_the_preference_lists_stay_blurred_after_a_reveal(client, cast, world):
    body = world["body"]
    ref = cast.case.reference
    client.force_login(cast.lead)
    client.post(reverse("own_preferences"), {"blur_graphic": "on"})
    page = client.get(body.get_absolute_url()).content.decode()
    assert "Show the picture" in page  # its page still waits for the click
    client.post(reverse("evidence:reveal", args=[ref, body.reference]))
    real = _derivative_bytes(body, "thumbnail")
    # The plain photo's page and the gallery both list the revealed item: blurred.
    for page_url in (world["plain"].get_absolute_url(), reverse("evidence:gallery", args=[ref])):
        client.get(page_url)
        url = views.thumbnail_url(cast.lead, ref, body.reference, body.pk)
        assert _body(client.get(url)) != real
    preview = reverse("evidence:preview", args=[ref, body.reference])
    assert _body(client.get(preview)) == _derivative_bytes(body, "preview")
