"""A recording or a scanned statement attached to a testimony is the statement in another
form: who may not read the statement of a High or Critical protection witness sees that
the item exists and its reference, never its title, file name, metadata, image or bytes."""

import io
import json
from pathlib import Path

import pytest
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from casefiles.access import INVESTIGATOR_GROUP, Role
from casefiles.models import AuditEntry
from evidence import services as evidence_services
from evidence import views
from evidence.models import EvidenceItem
from evidence.storage import evidence_storage
from people import services
from people.models import Identity
from people.models import Testimony as Statement
from people.protection import statement_refusal, withheld_testimonies
from places.models import Place
from tests.evidence.helpers import take_in
from tests.evidence.images import jpeg_bytes
from tests.factories import MembershipFactory, UserFactory

pytestmark = pytest.mark.django_db

SCAN = "statement-scan-hala.jpg"
SCAN_TITLE = "Statement of the sister of the guard, page one"
SCAN_CAMERA = "SecretCam 9"
OPEN_TITLE = "Recording of the market witness"


def _witness_and_testimony(cast, level):
    witness = services.register_person(
        actor=cast.lead,
        case=cast.case,
        role="witness",
        identity=Identity(name_ar="هالة"),
        protection_level=level,
    )
    testimony = services.create_testimony(
        actor=cast.lead,
        case=cast.case,
        witness=witness,
        text="They took us to the branch at dawn.",
        taken_at=timezone.now(),
        language="en",
        mode="in_person",
        interviewers=[],
    )
    return testimony


def _attach(actor, item, testimony, title):
    evidence_services.update_item(
        actor=actor, item=item, tags=[], title=title, description=title, testimony=testimony
    )
    return EvidenceItem.objects.select_related("original").get(pk=item.pk)


@pytest.fixture
def world(cast, tmp_path):
    """A public photo; a near-identical scan attached to a Critical protection witness's
    testimony; a recording attached to a Standard witness's testimony."""
    files = {
        "public.jpg": jpeg_bytes(0),
        SCAN: jpeg_bytes(0, quality=70, model=SCAN_CAMERA, taken="2011:03:15 08:00:00"),
        "market.jpg": jpeg_bytes(5),
    }
    batch = take_in(cast.case, cast.investigator, files, tmp_path / "m")
    items = {i.original_path: i for i in batch.items.all()}
    critical = _witness_and_testimony(cast, "critical")
    standard = _witness_and_testimony(cast, "standard")
    return {
        "public": items["public.jpg"],
        "scan": _attach(cast.lead, items[SCAN], critical, SCAN_TITLE),
        "open": _attach(cast.lead, items["market.jpg"], standard, OPEN_TITLE),
        "critical": critical,
    }


def _body(response) -> str:
    content = b"".join(response.streaming_content) if response.streaming else response.content
    return content.decode("utf-8", "replace")


def _content_urls(cast, item, user):
    args = [cast.case.reference, item.reference]
    return {
        "preview": reverse("evidence:preview", args=args),
        "original": reverse("evidence:download", args=args),
        "thumbnail": views.thumbnail_url(user, *args, item.pk),
        "edit": reverse("evidence:item_edit", args=args),
        "identification": reverse("evidence:identification_create", args=args),
    }


def test_the_item_page_of_a_withheld_scan_shows_only_its_reference_and_why(client, cast, world):
    scan = world["scan"]
    client.force_login(cast.investigator)
    response = client.get(scan.get_absolute_url())
    html = _body(response)
    assert response.status_code == 200
    assert scan.reference in html
    assert "attached to a testimony whose statement you may not read" in html
    assert "Critical protection" in html
    for secret in (
        SCAN_TITLE,
        "statement-scan-hala",
        SCAN_CAMERA,
        "2011:03:15",
        scan.original.sha256,
    ):
        assert secret not in html
    assert reverse("evidence:preview", args=[cast.case.reference, scan.reference]) not in html
    entry = AuditEntry.objects.get(action="evidence.view", target_id=str(scan.pk))
    assert entry.details["withheld"] is True


@pytest.mark.parametrize("asked", ["preview", "original", "thumbnail", "edit", "identification"])
def test_whoever_may_not_read_the_statement_gets_none_of_the_scan(client, cast, world, asked):
    scan = world["scan"]
    client.force_login(cast.investigator)
    response = client.get(_content_urls(cast, scan, cast.investigator)[asked])
    html = _body(response)
    assert response.status_code == 403
    assert response["Content-Type"].startswith("text/html")
    assert "attached to a testimony whose statement you may not read" in html
    assert SCAN_TITLE not in html and "statement-scan-hala" not in html
    entry = AuditEntry.objects.get(action="evidence.withheld", target_id=str(scan.pk))
    assert entry.details["asked"] == asked
    assert not AuditEntry.objects.filter(action="evidence.download").exists()
    assert not AuditEntry.objects.filter(action="evidence.preview").exists()


@pytest.mark.parametrize("who", ["lead", "lawyer"])
def test_the_lead_and_the_lawyers_see_the_scan_whole(client, cast, world, who):
    user = getattr(cast, who)
    scan = world["scan"]
    client.force_login(user)
    html = _body(client.get(scan.get_absolute_url()))
    assert SCAN_TITLE in html and "statement-scan-hala" in html and SCAN_CAMERA in html
    urls = _content_urls(cast, scan, user)
    for asked in ("preview", "thumbnail"):
        response = client.get(urls[asked])
        assert response.status_code == 200
        assert response["Content-Type"] == "image/jpeg"
    download = client.get(urls["original"])
    assert download.status_code == 200
    stored = Path(evidence_storage().path(scan.original.storage_key)).read_bytes()
    assert b"".join(download.streaming_content) == stored
    assert not AuditEntry.objects.filter(action="evidence.withheld").exists()


def test_a_standard_witness_attachment_is_seen_by_every_member(client, cast, world):
    item = world["open"]
    client.force_login(cast.investigator)
    assert OPEN_TITLE in _body(client.get(item.get_absolute_url()))
    urls = _content_urls(cast, item, cast.investigator)
    for asked in ("preview", "thumbnail", "original"):
        assert client.get(urls[asked]).status_code == 200


def test_the_gallery_shows_a_withheld_scan_by_reference_only(client, cast, world):
    scan = world["scan"]
    url = reverse("evidence:gallery", args=[cast.case.reference])
    client.force_login(cast.investigator)
    html = _body(client.get(url))
    assert scan.reference in html
    assert "Withheld: attached to a protected statement" in html
    assert "statement-scan-hala" not in html and SCAN_TITLE not in html
    assert SCAN_CAMERA not in html  # not even among the camera filter's choices
    assert f'alt="{scan.reference}"' not in html  # no thumbnail
    assert f'alt="{world["public"].reference}"' in html
    entry = AuditEntry.objects.filter(action="evidence.gallery").latest("seq")
    assert entry.details["withheld"] == [scan.reference]
    assert scan.reference not in entry.details["items"]

    client.force_login(cast.lawyer)
    html = _body(client.get(url))
    assert "statement-scan-hala" in html and f'alt="{scan.reference}"' in html


def test_a_search_on_what_the_files_hold_does_not_find_a_withheld_scan(client, cast, world):
    scan = world["scan"]
    url = reverse("evidence:gallery", args=[cast.case.reference])
    searches = [
        {"taken_after": "2011-03-15", "taken_before": "2011-03-15"},
        {"near_group": str(scan.near_group)},
        # Where its GPS position places it (places' filters): the nearest town, the
        # governorate.
        {"town": "Damascus"},
        {"place": str(Place.objects.get(code="SY-DI").pk)},
    ]
    client.force_login(cast.investigator)
    for search in searches:
        assert scan.reference not in _body(client.get(url, search))
    assert scan.reference in _body(client.get(url, {"kind": scan.kind}))
    client.force_login(cast.lawyer)
    for search in searches:
        assert scan.reference in _body(client.get(url, search))


def test_the_near_identical_items_of_a_photo_show_no_thumbnail_of_a_withheld_scan(
    client, cast, world
):
    public, scan = world["public"], world["scan"]
    assert public.near_group is not None and public.near_group == scan.near_group
    client.force_login(cast.investigator)
    html = _body(client.get(public.get_absolute_url()))
    assert scan.reference in html
    assert f'alt="{scan.reference}"' not in html
    entry = AuditEntry.objects.get(action="evidence.view", target_id=str(public.pk))
    assert entry.details["near"] == [] and entry.details["near_withheld"] == [scan.reference]
    client.force_login(cast.lawyer)
    assert f'alt="{scan.reference}"' in _body(client.get(public.get_absolute_url()))


def test_the_testimony_page_lists_a_withheld_attachment_without_its_title(client, cast, world):
    page = world["critical"].get_absolute_url()
    client.force_login(cast.investigator)
    html = _body(client.get(page))
    assert world["scan"].reference in html and SCAN_TITLE not in html
    client.force_login(cast.lawyer)
    assert SCAN_TITLE in _body(client.get(page))


def test_the_metadata_export_leaves_out_a_scan_its_account_may_not_read(cast, world):
    def export(user):
        out, err = io.StringIO(), io.StringIO()
        call_command(
            "evidence_metadata",
            "--case",
            cast.case.reference,
            "--as",
            user.username,
            stdout=out,
            stderr=err,
        )
        return [json.loads(line) for line in out.getvalue().splitlines()], err.getvalue()

    scan = world["scan"]
    rows, err = export(cast.investigator)
    assert scan.reference not in {r["reference"] for r in rows}
    assert world["open"].reference in {r["reference"] for r in rows}
    assert SCAN_CAMERA not in json.dumps(rows) and scan.reference in err
    entry = AuditEntry.objects.filter(action="evidence.export_metadata").latest("seq")
    assert entry.details["withheld"] == [scan.reference] and entry.details["items"] == 2
    rows, _err = export(cast.lawyer)
    assert scan.reference in {r["reference"] for r in rows}


def test_the_gallery_costs_the_same_queries_however_many_items_are_withheld(
    client, cast, world, tmp_path, django_assert_num_queries
):
    url = reverse("evidence:gallery", args=[cast.case.reference])
    client.force_login(cast.investigator)
    client.get(url)
    with CaptureQueriesContext(connection) as few:
        client.get(url)
    batch = take_in(
        cast.case,
        cast.investigator,
        {f"scan-{n}.jpg": jpeg_bytes(40 + n) for n in range(6)},
        tmp_path / "more",
    )
    for item in batch.items.all():
        _attach(cast.lead, item, world["critical"], SCAN_TITLE)
    with django_assert_num_queries(len(few.captured_queries)):
        html = _body(client.get(url))
    assert html.count("Withheld: attached to a protected statement") == 7


def test_the_withheld_set_is_the_statement_rule_for_every_member(cast):
    """``withheld_testimonies`` (many at once) says what ``statement_refusal`` says."""
    registrar = UserFactory(username="registrar", groups=[INVESTIGATOR_GROUP])
    interviewer = UserFactory(username="interviewer", groups=[INVESTIGATOR_GROUP])
    for user in (registrar, interviewer):
        MembershipFactory(user=user, case=cast.case, role=Role.INVESTIGATOR)
    for level in ("standard", "high", "critical"):
        witness = services.register_person(
            actor=registrar,
            case=cast.case,
            role="witness",
            identity=Identity(name_ar="هالة"),
            protection_level=level,
        )
        services.create_testimony(
            actor=registrar,
            case=cast.case,
            witness=witness,
            text="At dawn.",
            taken_at=timezone.now(),
            language="en",
            mode="in_person",
            interviewers=[interviewer],
        )
    users = [cast.lead, cast.investigator, cast.lawyer, cast.observer, cast.outsider]
    testimonies = Statement.objects.select_related("witness")
    for user in [*users, registrar, interviewer]:
        withheld = set(withheld_testimonies(user, cast.case).values_list("pk", flat=True))
        refused = {t.pk for t in testimonies if statement_refusal(user, t.witness, cast.case)}
        assert withheld == refused, user.username
