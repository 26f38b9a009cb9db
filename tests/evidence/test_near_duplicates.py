"""Near-duplicate groups, kept up to date image by image as intakes come in."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django_tasks_db.models import DBTaskResult
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evidence import near_duplicates
from evidence.models import EvidenceItem
from evidence.tasks import group_near_duplicates
from tests.evidence.factories import EvidenceItemFactory
from tests.evidence.helpers import take_in
from tests.evidence.images import jpeg_bytes

pytestmark = pytest.mark.django_db


def _intake(case, hashes):
    """Items with these perceptual hashes, written as an intake writes them (under the
    case's intake lock); nothing grouped yet. Returns their primary keys."""
    with transaction.atomic():
        return [
            EvidenceItemFactory(
                case=case, phash=None if h is None else h - (1 << 64) if h >= 1 << 63 else h
            ).pk
            for h in hashes
        ]


def _groups(case):
    return dict(EvidenceItem.objects.filter(case=case).values_list("pk", "near_group"))


def _from_scratch(case):
    rows = list(
        EvidenceItem.objects.filter(case=case, phash__isnull=False).values_list("pk", "phash")
    )
    expected = dict.fromkeys(EvidenceItem.objects.filter(case=case).values_list("pk", flat=True))
    for root, pks in near_duplicates.near_groups_from_scratch(rows).items():
        expected.update(dict.fromkeys(pks, root))
    return expected


# Photos of a few subjects: each hash is a subject's with a few of its first bits
# changed, so groups form, grow, chain and merge (two changes of 3 bits can be 6 apart,
# or 2, or 0; a later photo 3 from each bridges them).
_photo = st.one_of(
    st.tuples(st.integers(0, 3), st.sets(st.integers(0, 11), max_size=4)),
    st.none(),  # a file with no perceptual hash (not an image)
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    subjects=st.lists(st.integers(0, (1 << 64) - 1), min_size=4, max_size=4),
    intakes=st.lists(st.lists(_photo, max_size=12), min_size=1, max_size=5),
    chunk=st.integers(1, 8),
)
def test_groups_made_intake_by_intake_are_those_made_from_scratch(case, subjects, intakes, chunk):
    with transaction.atomic():
        for photos in intakes:
            hashes = []
            for photo in photos:
                if photo is None:
                    hashes.append(None)
                    continue
                subject, bits = photo
                hashes.append(subjects[subject] ^ sum(1 << b for b in bits))
            _intake(case, hashes)
            near_duplicates.group_near_duplicates(case, chunk=chunk)
            assert _groups(case) == _from_scratch(case)
        near_duplicates.regroup_near_duplicates(case)
        assert _groups(case) == _from_scratch(case)
        transaction.set_rollback(True)


def test_a_new_photo_near_two_groups_joins_them_into_one(case):
    a = _intake(case, [0, 0])  # two photos of one subject, the same hash
    b = _intake(case, [0xFF, 0xFF << 1])  # another subject: 8 bits from the first
    near_duplicates.group_near_duplicates(case)
    assert {g for pk, g in _groups(case).items()} == {a[0], b[0]}
    bridge = _intake(case, [0x0F])  # 4 bits from each
    near_duplicates.group_near_duplicates(case)
    assert _groups(case) == dict.fromkeys([*a, *b, *bridge], a[0])


def test_a_photo_alone_gets_a_group_once_its_near_twin_arrives(case):
    (first,) = _intake(case, [0x1234])
    near_duplicates.group_near_duplicates(case)
    assert _groups(case) == {first: None}
    (twin,) = _intake(case, [0x1234 ^ 0b101])
    (far,) = _intake(case, [~0x1234 & ((1 << 64) - 1)])
    near_duplicates.group_near_duplicates(case)
    assert _groups(case) == {first: first, twin: first, far: None}


def test_grouping_rebuilt_from_scratch_restores_the_groups(case, capsys):
    pks = _intake(case, [7, 7 ^ 1, 7 ^ 0b110, 0xFFFF << 40])
    near_duplicates.group_near_duplicates(case)
    EvidenceItem.objects.update(near_group=None)  # lost, say, in a restore gone wrong
    call_command("regroup_near_duplicates", "--case", case.reference)
    assert "SYR-2014-001: 1 near-duplicate groups" in capsys.readouterr().out
    assert _groups(case) == {pks[0]: pks[0], pks[1]: pks[0], pks[2]: pks[0], pks[3]: None}
    # and the index it rebuilt is the one later intakes are grouped against
    (late,) = _intake(case, [0xFFFF << 40 | 1])
    near_duplicates.group_near_duplicates(case)
    assert _groups(case)[late] == pks[3]


def test_a_one_file_upload_leaves_grouping_to_a_task_that_reads_only_the_new_photos_buckets(
    client, cast, tmp_path, django_capture_on_commit_callbacks
):
    held = take_in(
        cast.case,
        cast.investigator,
        {f"p{n}.jpg": jpeg_bytes(n) for n in range(12)}
        | {"p0-again.jpg": jpeg_bytes(0, quality=60)},
        tmp_path / "m",
    )
    p1 = held.items.get(original_path="p1.jpg")
    assert p1.near_group is None and held.items.filter(near_group__isnull=False).count() == 2
    client.force_login(cast.investigator)
    upload = SimpleUploadedFile("p1-again.jpg", jpeg_bytes(1, quality=60), "image/jpeg")
    with (
        CaptureQueriesContext(connection) as request_queries,
        django_capture_on_commit_callbacks(execute=True),
    ):
        response = client.post(
            reverse("evidence:upload", args=[cast.case.reference]),
            {"files": [upload], "acquired_from": "W-0002"},
        )
    assert response.status_code == 302
    new = EvidenceItem.objects.get(original_path="p1-again.jpg")
    # Taken in, not yet grouped: the request read nothing of the case's other photos.
    assert new.near_group is None
    assert not [q for q in request_queries.captured_queries if "nearhash" in q["sql"].lower()]
    queued = DBTaskResult.objects.get(task_path="evidence.tasks.group_near_duplicates")
    assert queued.args_kwargs["args"] == [cast.case.pk]
    # The task (as `manage.py db_worker` runs it) reads the new photo and the indexed
    # hashes equal to its own or sharing a band with it: p1's, not the 12 others.
    done = near_duplicates.group_near_duplicates(cast.case)
    assert (done.items, done.candidates) == (1, 1)
    p1.refresh_from_db()
    new.refresh_from_db()
    assert new.near_group == p1.near_group == p1.pk
    assert group_near_duplicates.call(cast.case.pk) == 0  # queued twice: nothing left to do
    page = client.get(p1.get_absolute_url()).content.decode()
    assert new.reference in page  # the item page shows its near-duplicate


def test_a_grouping_task_lost_with_its_worker_is_queued_again_when_workers_start(case, capsys):
    pks = _intake(case, [0xAB, 0xAB])  # taken in; the task that would group them lost
    call_command("resume_batches")
    assert "near-duplicate grouping queued for 1 case(s)" in capsys.readouterr().out
    queued = DBTaskResult.objects.get(task_path="evidence.tasks.group_near_duplicates")
    call_command("resume_batches")  # already queued: not twice
    assert DBTaskResult.objects.filter(task_path=queued.task_path).count() == 1
    group_near_duplicates.call(*queued.args_kwargs["args"])
    assert _groups(case) == dict.fromkeys(pks, pks[0])
    DBTaskResult.objects.all().delete()
    call_command("resume_batches")  # nothing behind: nothing queued
    assert not DBTaskResult.objects.exists()
