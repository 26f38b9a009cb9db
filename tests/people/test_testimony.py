import pytest
from django.core.exceptions import ValidationError
from django.db import DatabaseError, connection, transaction
from django.utils import timezone

from casefiles.models import AuditEntry
from legal.models import ReviewDecision
from legal.services import review
from people import models, services
from tests.factories import register_person

pytestmark = pytest.mark.django_db

STATEMENT = "رأيتُ الحافلة تدخل الفرع عند الفجر.\nكان معي أخي."
TABLE = models.TestimonyVersion._meta.db_table


@pytest.fixture
def testimony(cast):
    witness = register_person(cast.case, cast.investigator)
    return services.create_testimony(
        actor=cast.investigator,
        case=cast.case,
        witness=witness,
        text=STATEMENT,
        taken_at=timezone.now(),
        language="ar",
        mode="in_person",
        interviewers=[cast.investigator],
    )


def _approve(cast, testimony):
    review.decide(actor=cast.investigator, record=testimony, to_status="submitted")
    review.decide(actor=cast.lawyer, record=testimony, to_status="approved")


def test_a_new_testimony_is_a_draft_with_its_first_version_hashed(testimony):
    import hashlib

    version = testimony.versions.get()
    assert testimony.status == "draft"
    assert (version.number, version.text) == (1, STATEMENT)
    assert version.sha256 == hashlib.sha256(STATEMENT.encode()).hexdigest()
    entry = AuditEntry.objects.get(action="testimony.create")
    assert entry.details["sha256"] == version.sha256


@pytest.mark.parametrize(
    "sql",
    [f'UPDATE "{TABLE}" SET text = %s', f'DELETE FROM "{TABLE}"'],
    ids=["update", "delete"],
)
def test_the_database_refuses_to_change_or_remove_a_version(testimony, sql):
    params = ["forged"] if sql.startswith("UPDATE") else []
    with pytest.raises(DatabaseError, match="append-only"), transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
    assert list(models.TestimonyVersion.objects.values_list("text", flat=True)) == [STATEMENT]


def test_the_database_refuses_to_truncate_versions_on_postgresql(testimony):
    if connection.vendor != "postgresql":
        pytest.skip("SQLite has no TRUNCATE")
    with pytest.raises(DatabaseError, match="append-only"), transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
            cursor.execute(f'TRUNCATE "{TABLE}" CASCADE')
    assert models.TestimonyVersion.objects.count() == 1


def test_the_model_refuses_to_change_or_remove_a_version(testimony):
    version = testimony.versions.get()
    version.text = "forged"
    with pytest.raises(TypeError):
        version.save()
    with pytest.raises(TypeError):
        version.delete()
    with pytest.raises(TypeError):
        models.TestimonyVersion.objects.update(text="forged")
    with pytest.raises(TypeError):
        models.TestimonyVersion.objects.all().delete()


def test_a_revision_is_a_new_version_and_the_old_one_stays(cast, testimony):
    services.revise_testimony(
        actor=cast.investigator,
        testimony=testimony,
        text=STATEMENT + "\nثم أُغلق الباب.",
        reason="Witness added a detail at the second meeting",
    )
    first, second = testimony.versions.order_by("number")
    assert first.text == STATEMENT
    assert second.number == 2 and second.reason.startswith("Witness added")
    diff = services.diff_versions(first, second)
    assert ("+", "ثم أُغلق الباب.") in diff
    assert (" ", "كان معي أخي.") in diff


def test_a_revision_needs_a_reason(cast, testimony):
    with pytest.raises(ValidationError):
        services.revise_testimony(
            actor=cast.investigator, testimony=testimony, text="x", reason=" "
        )
    assert testimony.versions.count() == 1


def test_the_submitter_cannot_approve(cast, testimony):
    review.decide(actor=cast.lead, record=testimony, to_status="submitted")
    with pytest.raises(ValidationError, match="submitted"):
        review.decide(actor=cast.lead, record=testimony, to_status="approved")
    testimony.refresh_from_db()
    assert testimony.status == "submitted"
    assert review.allowed_targets(cast.lead, testimony) == ["returned", "rejected"]
    review.decide(actor=cast.lawyer, record=testimony, to_status="approved")
    testimony.refresh_from_db()
    assert testimony.status == "approved"


def test_each_transition_is_recorded_and_audited(cast, testimony):
    review.decide(actor=cast.investigator, record=testimony, to_status="submitted")
    review.decide(
        actor=cast.lawyer, record=testimony, to_status="returned", comment="Dates unclear"
    )
    services.revise_testimony(
        actor=cast.investigator, testimony=testimony, text=STATEMENT + " 2014", reason="Dates"
    )
    _approve(cast, testimony)
    steps = list(ReviewDecision.objects.values_list("from_status", "to_status", "actor__username"))
    assert steps == [
        ("draft", "submitted", "investigator"),
        ("submitted", "returned", "lawyer"),
        ("returned", "submitted", "investigator"),
        ("submitted", "approved", "lawyer"),
    ]
    actions = list(
        AuditEntry.objects.filter(action__regex=r"^(testimony|review)\.")
        .order_by("seq")
        .values_list("action", flat=True)
    )
    assert actions == [
        "testimony.create",
        "review.submit",
        "review.return",
        "testimony.revise",
        "review.submit",
        "review.approve",
    ]
    assert AuditEntry.objects.get(action="review.return").details["comment"] == "Dates unclear"
    # What was approved: the second version, by its hash.
    second = testimony.versions.get(number=2)
    assert AuditEntry.objects.get(action="review.approve").details["sha256"] == second.sha256
    assert ReviewDecision.objects.get(to_status="approved").sha256 == second.sha256


def test_returning_needs_a_comment(cast, testimony):
    review.decide(actor=cast.investigator, record=testimony, to_status="submitted")
    with pytest.raises(ValidationError):
        review.decide(actor=cast.lawyer, record=testimony, to_status="returned")


def test_an_approved_testimony_that_changes_goes_back_to_review(cast, testimony):
    _approve(cast, testimony)
    with pytest.raises(ValidationError):  # approved: no step of the table but by a change
        review.decide(actor=cast.lead, record=testimony, to_status="returned")
    version = services.revise_testimony(
        actor=cast.lead, testimony=testimony, text="new", reason="late change"
    )
    testimony.refresh_from_db()
    assert testimony.status == "submitted" and testimony.versions.count() == 2
    reopened = ReviewDecision.objects.filter(testimony=testimony).latest("pk")
    assert (reopened.from_status, reopened.to_status) == ("approved", "submitted")
    assert reopened.actor == cast.lead and reopened.sha256 == version.sha256
    entry = AuditEntry.objects.get(action="review.reopen")
    assert entry.details["sha256"] == version.sha256 and entry.target_id == str(testimony.pk)
    # Who changed it cannot approve it now; a second person can.
    with pytest.raises(ValidationError, match="last changed"):
        review.decide(actor=cast.lead, record=testimony, to_status="approved")


def test_the_database_keeps_an_approved_testimony_locked(cast, testimony):
    _approve(cast, testimony)
    with pytest.raises(DatabaseError, match="locked"), transaction.atomic():
        models.Testimony.objects.filter(pk=testimony.pk).update(status="draft")
    with pytest.raises(DatabaseError, match="locked"), transaction.atomic():
        models.TestimonyVersion(
            testimony=testimony,
            number=2,
            text="x",
            reason="x",
            sha256="0" * 64,
            author=cast.investigator,
        ).save()
    testimony.refresh_from_db()
    assert testimony.status == "approved" and testimony.versions.count() == 1


def test_only_roles_with_the_right_may_submit_or_approve(cast, testimony):
    from django.core.exceptions import PermissionDenied

    with pytest.raises(PermissionDenied):
        review.decide(actor=cast.observer, record=testimony, to_status="submitted")
    review.decide(actor=cast.investigator, record=testimony, to_status="submitted")
    with pytest.raises(PermissionDenied):  # an investigator has no approval right
        review.decide(actor=cast.investigator, record=testimony, to_status="approved")


def test_who_wrote_a_version_cannot_approve_even_when_a_colleague_submitted(cast, testimony):
    services.revise_testimony(
        actor=cast.lead, testimony=testimony, text=STATEMENT + " (corrected)", reason="typo"
    )
    review.decide(actor=cast.investigator, record=testimony, to_status="submitted")
    assert "approved" not in review.allowed_targets(cast.lead, testimony)
    with pytest.raises(ValidationError, match="last changed"):
        review.decide(actor=cast.lead, record=testimony, to_status="approved")
    review.decide(actor=cast.lawyer, record=testimony, to_status="approved")
    testimony.refresh_from_db()
    assert testimony.status == "approved"
