"""`insert_rows`, the intake's fast path, stores what the ORM would have stored."""

from datetime import UTC, date, datetime
from decimal import Decimal

import pytest
from django.db import IntegrityError, transaction

from casefiles.bulk import insert_rows
from evidence.models import Provenance, StoredFile
from tests.evidence.factories import EvidenceItemFactory

pytestmark = pytest.mark.django_db


def _fields(p: Provenance) -> dict:
    return {
        f.attname: getattr(p, f.attname)
        for f in Provenance._meta.concrete_fields
        if f.attname not in ("id", "item_id")
    }


def test_rows_read_back_exactly_as_the_orm_writes_them(case, taker):
    values = dict(
        acquired_from="الشاهد W-0001",
        acquired_at=datetime(2013, 8, 21, 10, 15, 30, 123456, tzinfo=UTC),
        method="copied from the medium",
        metadata={"Make": "Canon", "GPSLatitude": ["33/1", "30/1"], "note": "صِفر", "n": 0},
        camera_make="Canon",
        taken_at="2013:08:21 10:15:00",
        taken_date=date(2013, 8, 21),
        gps_latitude=Decimal("33.5100000"),
        gps_longitude=Decimal("-36.2900000"),
        orientation=6,
        width=1600,
        height=1200,
    )
    by_orm, by_rows = EvidenceItemFactory(case=case), EvidenceItemFactory(case=case)
    Provenance.objects.bulk_create([Provenance(item=by_orm, acquired_by=taker, **values)])
    insert_rows(Provenance, [dict(item_id=by_rows.pk, acquired_by_id=taker.pk, **values)])
    orm, rows = Provenance.objects.get(item=by_orm), Provenance.objects.get(item=by_rows)
    assert _fields(rows) == _fields(orm)
    # Fields not named take their defaults, as in Model().
    assert (rows.acquired_where, rows.medium, rows.medium_serial) == ("", "", "")


def test_a_column_that_does_not_exist_is_refused_and_nothing_written(case, taker):
    item = EvidenceItemFactory(case=case)
    with pytest.raises(ValueError, match="acquired_frm"):
        insert_rows(Provenance, [dict(item_id=item.pk, acquired_by_id=taker.pk, acquired_frm="x")])
    assert not Provenance.objects.exists()


def test_conflicts_are_skipped_only_when_asked_and_never_overwrite(case):
    first = dict(sha256="a" * 64, size=1, media_type="image/jpeg", storage_key="k/a")
    insert_rows(StoredFile, [first])
    again = dict(first, size=999, media_type="text/plain")
    insert_rows(StoredFile, [again], ignore_conflicts=True)
    assert StoredFile.objects.values_list("size", "media_type").get() == (1, "image/jpeg")
    with pytest.raises(IntegrityError), transaction.atomic():
        insert_rows(StoredFile, [again])
