"""The review table (legal/review.py) on evidence items and testimony: every move the
table has and every one it has not, four eyes, a change after approval, the system admin,
and decisions the database keeps as they were written."""

import itertools

import pytest
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import DatabaseError, transaction
from django.urls import reverse

from casefiles.access import LAWYER_GROUP, Role
from casefiles.models import AuditEntry
from casefiles.reviewing import ReviewStatus as S
from evidence import services as evidence_services
from legal.models import ReviewDecision
from legal.review import TRANSITIONS
from legal.services import review
from people import services as people_services
from tests.evidence.factories import EvidenceItemFactory
from tests.factories import MembershipFactory, register_person

pytestmark = pytest.mark.django_db

REASON = "The date on the photo and the witness's account differ."

# How an item reaches each status, step by step: (to, who, comment).
PATHS = {
    S.NEW: [],
    S.SUBMITTED: [(S.SUBMITTED, "investigator", "")],
    S.APPROVED: [(S.SUBMITTED, "investigator", ""), (S.APPROVED, "lawyer", "")],
    S.RETURNED: [(S.SUBMITTED, "investigator", ""), (S.RETURNED, "lawyer", REASON)],
    S.REJECTED: [(S.SUBMITTED, "investigator", ""), (S.REJECTED, "lawyer", REASON)],
}


@pytest.fixture
def item(cast):
    return EvidenceItemFactory(case=cast.case)


def _drive(cast, record, status):
    for to, who, comment in PATHS[status]:
        review.decide(actor=getattr(cast, who), record=record, to_status=to, comment=comment)
    return record


def test_the_table_is_the_one_the_review_follows():
    offered = {(s, t) for (s, t), move in TRANSITIONS.items() if move.offered}
    assert offered == {
        (S.NEW, S.SUBMITTED),
        (S.RETURNED, S.SUBMITTED),
        (S.SUBMITTED, S.APPROVED),
        (S.SUBMITTED, S.RETURNED),
        (S.SUBMITTED, S.REJECTED),
    }
    assert not TRANSITIONS[(S.APPROVED, S.SUBMITTED)].offered  # only when content changes


@pytest.mark.parametrize(("source", "target"), list(itertools.product(S.values, S.values)))
def test_every_move_on_an_item_is_taken_or_refused_as_the_table_says(cast, item, source, target):
    _drive(cast, item, source)
    move = TRANSITIONS.get((source, target))
    # The lead may take every offered step (they neither submitted nor changed the item).
    who = cast.lead
    comment = REASON if move and move.needs_comment else ""
    if move is None or not move.offered:
        with pytest.raises(ValidationError) as refused:
            review.decide(actor=who, record=item, to_status=target, comment=comment)
        assert "cannot be made" in str(refused.value)
        item.refresh_from_db()
        assert item.review_status == source
        assert target not in review.allowed_targets(who, item)
        return
    before = ReviewDecision.objects.count()
    decision = review.decide(actor=who, record=item, to_status=target, comment=comment)
    item.refresh_from_db()
    assert item.review_status == target
    assert (decision.from_status, decision.to_status, decision.actor) == (source, target, who)
    assert decision.sha256 == item.original.sha256  # what was reviewed: the original
    assert ReviewDecision.objects.count() == before + 1
    entry = AuditEntry.objects.latest("seq")
    assert entry.action == f"review.{move.verb}" and entry.target_id == str(item.pk)
    assert entry.details["bound"]["people_reviewdecision"]["rows"].keys() == {str(decision.pk)}


def test_who_submitted_an_item_cannot_approve_it(cast, item):
    MembershipFactory(user=cast.outsider, case=cast.case, role=Role.LEAD)
    review.decide(actor=cast.outsider, record=item, to_status=S.SUBMITTED)
    assert S.APPROVED not in review.allowed_targets(cast.outsider, item)
    with pytest.raises(ValidationError, match="second person"):
        review.decide(actor=cast.outsider, record=item, to_status=S.APPROVED)
    review.decide(actor=cast.lawyer, record=item, to_status=S.APPROVED)
    item.refresh_from_db()
    assert item.review_status == S.APPROVED


def test_who_last_changed_an_item_cannot_approve_it(cast, item):
    evidence_services.update_item(
        actor=cast.lawyer, item=item, tags=[], description="Body no. 2271, branch 227."
    )
    review.decide(actor=cast.investigator, record=item, to_status=S.SUBMITTED)
    with pytest.raises(ValidationError, match="last changed"):
        review.decide(actor=cast.lawyer, record=item, to_status=S.APPROVED)
    review.decide(actor=cast.lead, record=item, to_status=S.APPROVED)


def test_returning_or_rejecting_takes_a_comment(cast, item):
    _drive(cast, item, S.SUBMITTED)
    for target in (S.RETURNED, S.REJECTED):
        with pytest.raises(ValidationError) as refused:
            review.decide(actor=cast.lawyer, record=item, to_status=target, comment="  ")
        assert "comment" in refused.value.message_dict
    item.refresh_from_db()
    assert item.review_status == S.SUBMITTED and item.decisions.count() == 1


def test_a_change_after_approval_sends_the_item_back_to_review(cast, item):
    _drive(cast, item, S.APPROVED)
    evidence_services.update_item(actor=cast.investigator, item=item, tags=["branch-227"])
    item.refresh_from_db()
    assert item.review_status == S.APPROVED  # a tag is not what was reviewed
    evidence_services.update_item(
        actor=cast.lead, item=item, tags=["branch-227"], claimed_place="Mezzeh"
    )
    item.refresh_from_db()
    assert item.review_status == S.SUBMITTED
    back = item.decisions.latest("pk")
    assert (back.from_status, back.to_status, back.actor) == (S.APPROVED, S.SUBMITTED, cast.lead)
    assert AuditEntry.objects.filter(action="review.reopen", target_id=str(item.pk)).exists()
    with pytest.raises(ValidationError, match="last changed"):
        review.decide(actor=cast.lead, record=item, to_status=S.APPROVED)
    review.decide(actor=cast.lawyer, record=item, to_status=S.APPROVED)


def test_roles_without_the_right_are_refused(cast, item):
    with pytest.raises(PermissionDenied):
        review.decide(actor=cast.observer, record=item, to_status=S.SUBMITTED)
    with pytest.raises(PermissionDenied):
        review.decide(actor=cast.outsider, record=item, to_status=S.SUBMITTED)
    review.decide(actor=cast.investigator, record=item, to_status=S.SUBMITTED)
    with pytest.raises(PermissionDenied):  # investigators take in, lawyers and leads decide
        review.decide(actor=cast.investigator, record=item, to_status=S.APPROVED)


def test_a_system_admin_reviews_nothing_even_as_a_member(cast, item):
    from django.contrib.auth.models import Group

    cast.admin.groups.add(Group.objects.get(name=LAWYER_GROUP))
    MembershipFactory(user=cast.admin, case=cast.case, role=Role.LAWYER)
    _drive(cast, item, S.SUBMITTED)
    assert review.allowed_targets(cast.admin, item) == []
    with pytest.raises(PermissionDenied, match="system admin"):
        review.decide(actor=cast.admin, record=item, to_status=S.APPROVED)
    item.refresh_from_db()
    assert item.review_status == S.SUBMITTED


def test_the_same_table_moves_a_testimony(cast):
    witness = register_person(cast.case, cast.investigator)
    testimony = people_services.create_testimony(
        actor=cast.investigator,
        case=cast.case,
        witness=witness,
        text="They took him at the checkpoint.",
        taken_at="2014-08-20T10:00:00Z",
        language="en",
        mode="in_person",
    )
    review.decide(actor=cast.investigator, record=testimony, to_status=S.SUBMITTED)
    with pytest.raises(ValidationError):
        review.decide(actor=cast.lawyer, record=testimony, to_status=S.REJECTED)
    review.decide(actor=cast.lawyer, record=testimony, to_status=S.REJECTED, comment=REASON)
    testimony.refresh_from_db()
    assert testimony.status == S.REJECTED and not testimony.editable
    decision = testimony.decisions.latest("pk")
    assert decision.sha256 == testimony.versions.get().sha256


def test_the_database_refuses_to_change_or_delete_a_decision(cast, item):
    decision = review.decide(actor=cast.investigator, record=item, to_status=S.SUBMITTED)
    with pytest.raises(TypeError):
        decision.save()
    with pytest.raises(TypeError):
        ReviewDecision.objects.filter(pk=decision.pk).update(comment="x")
    table = ReviewDecision._meta.db_table
    from django.db import connection

    for sql in (
        f"UPDATE {table} SET comment = 'approved without looking' WHERE id = %s",
        f"UPDATE {table} SET to_status = 'approved' WHERE id = %s",
        f"DELETE FROM {table} WHERE id = %s",
    ):
        with pytest.raises(DatabaseError, match="append-only"), transaction.atomic():
            with connection.cursor() as cursor:
                cursor.execute(sql, [decision.pk])
    decision.refresh_from_db()
    assert decision.to_status == S.SUBMITTED and decision.comment == ""


def test_the_review_panel_offers_only_what_the_viewer_may_do(client, cast, item):
    url = item.get_absolute_url()
    client.force_login(cast.investigator)
    page = client.get(url).content.decode()
    assert "Submit for review" in page and 'value="approved"' not in page
    client.post(
        reverse("legal:item_review", args=[cast.case.reference, item.reference]),
        {"to_status": S.SUBMITTED},
    )
    item.refresh_from_db()
    assert item.review_status == S.SUBMITTED
    page = client.get(url).content.decode()
    assert "investigator: New → Submitted" in page and "<form" in page
    client.force_login(cast.lawyer)
    page = client.get(url).content.decode()
    assert 'value="approved"' in page and 'value="rejected"' in page


def test_a_refused_decision_keeps_the_comment_and_says_why(client, cast, item):
    _drive(cast, item, S.SUBMITTED)
    client.force_login(cast.investigator)
    url = reverse("legal:item_review", args=[cast.case.reference, item.reference])
    response = client.post(url, {"to_status": S.APPROVED, "comment": "Looks right to me"})
    assert response.status_code == 403  # an investigator holds no approval right
    client.force_login(cast.lawyer)
    response = client.post(url, {"to_status": S.RETURNED, "comment": ""})
    assert response.status_code == 400
    assert "a comment is required" in response.content.decode()
    response = client.post(url, {"to_status": "archived", "comment": "Keep this text"})
    assert response.status_code == 400
    html = response.content.decode()
    assert "Choose one of the decisions offered." in html and "Keep this text" in html
    client.force_login(cast.outsider)
    assert client.post(url, {"to_status": S.APPROVED}).status_code == 404
    item.refresh_from_db()
    assert item.review_status == S.SUBMITTED


def test_the_panels_forms_carry_the_pages_csrf_token(cast, item):
    from tests.conftest import VerifiedClient

    client = VerifiedClient(enforce_csrf_checks=True)
    client.force_login(cast.investigator)
    page = client.get(item.get_absolute_url()).content.decode()
    review_form = page.split('id="review"')[1].split("</form>")[0]
    token = review_form.split('name="csrfmiddlewaretoken" value="')[1].split('"')[0]
    url = reverse("legal:item_review", args=[cast.case.reference, item.reference])
    assert client.post(url, {"to_status": S.SUBMITTED}).status_code == 403
    response = client.post(url, {"to_status": S.SUBMITTED, "csrfmiddlewaretoken": token})
    assert response.status_code == 302
