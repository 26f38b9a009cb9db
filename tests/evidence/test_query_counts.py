"""Exact query counts (not ceilings) on the paths that are walked most: a change that adds
a query to them says so here, and is then a decision, not an accident."""

import random

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from evidence import near_duplicates, services, views
from evidence.intake.payload import SourceFile
from evidence.intake.steps import process_many
from evidence.models import Derivative
from evidence.storage import evidence_storage
from tests.evidence.factories import CustodyEventFactory, EvidenceItemFactory
from tests.evidence.helpers import take_in
from tests.evidence.images import jpeg_bytes, write

# One chunk of intake, whatever its size: the stored files and their thumbnails (2), the
# case's references under its intake lock (2), which bytes the case holds already (1),
# the items (1: their keys come back from the insert), provenance (1), custody events and
# their audit entry (5, the chain's head and the rows it binds read back), the search
# index following the entry (5: the items' keys, their old entries out, their rows and
# tags read, the new entries in), the batch's counts (2), and the transaction (2 here, a
# savepoint in the test's transaction), and, for photos that record a GPS position (these
# do), places' nearest towns: the governorates and facilities they name (1) and the
# items' locations (1).
# Each audit entry takes the chain's advisory lock on PostgreSQL (SQLite's BEGIN
# IMMEDIATE holds its one lock).
CHAIN_LOCK = 1 if connection.vendor == "postgresql" else 0
CHUNK_QUERIES = 25 + CHAIN_LOCK
# An audited page ("evidence.gallery"); places' filter offers the places of the
# gazetteer, each with the one it sits within (1). A place chosen costs one more, whatever
# its kind (tests/places/test_place_filter.py).
GALLERY_QUERIES = 15 + CHAIN_LOCK
# An audited page ("evidence.view"); legal's panels read the review decisions, whether
# the viewer is a system admin (who reviews nothing), the assessments, links and comments;
# and the items either side (keys n and p); places' panel reads the governorate of the
# photo's nearest town and the facilities that have a position (one query, only for an
# item with a GPS position: these photos have one).
ITEM_QUERIES = 23 + CHAIN_LOCK
THUMBNAIL_QUERIES = 6  # not audited: the gallery that gave its URL was
# A near-duplicate pass over a case already indexed, run after each chunk of intake: the
# index's mark read and locked (2), the new items' groups cleared and the items read (2),
# the hash bands looked up (6), the new hashes in (1, one statement for all), the mark
# moved on (1), and the transaction (1 here, a savepoint in the test's transaction).
NEAR_PASS_QUERIES = 13


@pytest.mark.parametrize("size", [1, 5, 20])
@pytest.mark.parametrize("graphic", [False, True])
def test_a_chunk_of_intake_costs_the_same_queries_whatever_its_size(
    case, taker, tmp_path, size, graphic
):
    """A graphic batch too: its items are marked, and their blurred thumbnails recorded,
    by the same statements."""
    batch = services.open_batch(
        actor=taker,
        case=case,
        source_root=str(tmp_path),
        acquired_from="W-0001",
        medium="",
        resume_files=None,
        graphic=graphic,
    )
    assert services.claim_batch(batch)
    sources = [
        SourceFile(path=f"{n}.jpg", fs_path=str(write(tmp_path / f"{n}.jpg", jpeg_bytes(n + 1))))
        for n in range(size)
    ]
    results = process_many(sources, evidence_storage().for_workers(), blurred=graphic)
    with CaptureQueriesContext(connection) as chunk:
        written = services.record_intake(
            actor=taker,
            case=case,
            batch=batch,
            results=results,
            acquired_from="W-0001",
            problems=[],
            total=size,
        )
    assert written == size and batch.items.filter(is_graphic=graphic).count() == size
    blurred = Derivative.objects.filter(kind="blurred", original__items__batch=batch)
    assert blurred.count() == (size if graphic else 0)
    assert len(chunk.captured_queries) == CHUNK_QUERIES, [q["sql"] for q in chunk]


@pytest.mark.parametrize("size", [1, 5, 20])
def test_a_near_duplicate_pass_costs_the_same_queries_whatever_its_size(case, size):
    rnd = random.Random(size)
    # Placed once: the case's index exists; then a chunk's worth of new, unrelated images.
    near_duplicates.group_near_duplicates(EvidenceItemFactory(case=case, phash=1).case)
    with transaction.atomic():  # written as an intake writes them: under its transaction
        for _ in range(size):
            EvidenceItemFactory(case=case, phash=rnd.getrandbits(63))
    with CaptureQueriesContext(connection) as near_pass:
        done = near_duplicates.group_near_duplicates(case)
    assert done.items == size
    assert len(near_pass.captured_queries) == NEAR_PASS_QUERIES, [q["sql"] for q in near_pass]


@pytest.fixture(params=["plain", "graphic"])
def photos(request, cast, tmp_path):
    """Six photos; or the same marked graphic: a graphic item costs its pages no query
    (its blurred thumbnail is served by the thumbnail's own URL)."""
    files = {f"p{n}.jpg": jpeg_bytes(n) for n in range(6)}
    items = take_in(cast.case, cast.investigator, files, tmp_path / "m").items.order_by("pk")
    if request.param == "graphic":
        services.set_graphic(actor=cast.lead, case=cast.case, items=items)
    return items


def test_the_gallery_page_costs_an_exact_number_of_queries(client, cast, photos):
    client.force_login(cast.investigator)
    url = reverse("evidence:gallery", args=[cast.case.reference])
    client.get(url)  # the session and the language settle on the first request
    with CaptureQueriesContext(connection) as page:
        response = client.get(url)
    assert response.status_code == 200
    assert len(page.captured_queries) == GALLERY_QUERIES, [q["sql"] for q in page]


@pytest.mark.parametrize("hand_recorded", [0, 3])
def test_the_item_page_costs_an_exact_number_of_queries(client, cast, photos, hand_recorded):
    item = photos.first()
    CustodyEventFactory.create_batch(hand_recorded, item=item, actor=cast.lead)
    client.force_login(cast.investigator)
    client.get(item.get_absolute_url())
    with CaptureQueriesContext(connection) as page:
        response = client.get(item.get_absolute_url())
    assert response.status_code == 200
    assert response.content.decode().count("moved to the evidence room") == hand_recorded
    assert len(page.captured_queries) == ITEM_QUERIES, [q["sql"] for q in page]


def test_a_thumbnail_costs_the_same_queries_blurred_or_not(client, cast, photos):
    """A graphic item's thumbnail URL serves its blurred one at the same cost; once it is
    revealed, one query more asks whether the user keeps graphic images blurred."""
    item = photos.first()
    client.force_login(cast.investigator)
    client.get(reverse("evidence:gallery", args=[cast.case.reference]))
    url = views.thumbnail_url(cast.investigator, cast.case.reference, item.reference, item.pk)
    client.get(url)  # a blurred thumbnail of an item marked after intake: made now
    with CaptureQueriesContext(connection) as served:
        assert client.get(url).status_code == 200
    assert len(served.captured_queries) == THUMBNAIL_QUERIES, [q["sql"] for q in served]
    if item.is_graphic:
        client.post(reverse("evidence:reveal", args=[cast.case.reference, item.reference]))
        with CaptureQueriesContext(connection) as served:
            assert client.get(url).status_code == 200
        assert len(served.captured_queries) == THUMBNAIL_QUERIES + 1
