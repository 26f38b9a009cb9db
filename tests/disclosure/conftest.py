"""A case ready to disclose: three photos (two approved in review, the first of them given
by a Critical protection source), a standard witness who consented to prosecution and
sharing with one body, and a Critical one who consented to investigation only; both
statements approved."""

from types import SimpleNamespace

import pytest
from django.utils import timezone

from evidence import services as evidence_services
from legal.services import review
from people import services as people_services
from tests.evidence.helpers import take_in
from tests.evidence.images import jpeg_bytes
from tests.factories import register_person

BODY = "A war-crimes unit (fictional)"
CRITICAL_NAME = "وليد الخطيب"
CRITICAL_LATIN = "Walid al-Khatib"
STANDARD_LATIN = "Rami Saleh"


def approve(record, submitter, approver):
    review.decide(actor=submitter, record=record, to_status="submitted")
    review.decide(actor=approver, record=record, to_status="approved")


@pytest.fixture(autouse=True)
def data_dir(tmp_path, settings):
    """Each test's built packages (tar files, reports) in its own data directory: tests
    running side by side each build a PKG-0001, and none may replace another's."""
    settings.DATA_DIR = tmp_path / "data"
    return settings.DATA_DIR


@pytest.fixture
def world(cast, tmp_path):
    files = {f"IMG_{n}.jpg": jpeg_bytes(n) for n in range(3)}
    photos = list(take_in(cast.case, cast.investigator, files, tmp_path / "m").items.order_by("pk"))
    critical = register_person(
        cast.case,
        cast.lead,
        protection_level="critical",
        name_ar=CRITICAL_NAME,
        name_latin=CRITICAL_LATIN,
        aliases="Qaisar-test",
    )
    standard = register_person(
        cast.case, cast.investigator, name_ar="رامي صالح", name_latin=STANDARD_LATIN
    )
    today = timezone.now().date()
    people_services.record_consent(
        actor=cast.lead,
        case=cast.case,
        person=critical,
        scopes=["investigation"],
        how="written",
        given_on=today,
    )
    people_services.record_consent(
        actor=cast.investigator,
        case=cast.case,
        person=standard,
        scopes=["prosecution", "sharing"],
        bodies=BODY,
        how="written",
        given_on=today,
    )
    statements = {}
    writers = (
        ("standard", standard, cast.investigator, cast.lead),
        ("critical", critical, cast.lead, cast.lawyer),
    )
    for key, person, by, approver in writers:
        testimony = people_services.create_testimony(
            actor=by,
            case=cast.case,
            witness=person,
            text=f"Statement of {person.code}: we were held in the branch.\nسجنا في الفرع.",
            taken_at=timezone.now(),
            language="en",
            mode="in_person",
        )
        approve(testimony, by, approver)
        statements[key] = testimony
    evidence_services.update_item(
        actor=cast.investigator, item=photos[0], tags=[], source_person=critical
    )
    for photo in photos[:2]:
        photo.refresh_from_db()
        approve(photo, cast.lawyer, cast.lead)
    return SimpleNamespace(
        cast=cast,
        case=cast.case,
        photos=photos,
        critical=critical,
        standard=standard,
        testimonies=statements,
    )
