"""Bulk actions from the review workspace: a confirmation that says how many items will
change and which are skipped and why; then chunks, each one transaction whose audit entry
names every item it changed and binds the decisions and links it wrote; more than 500
items run as a task with a progress page; who may take which action; bad input refused
with a 400, never a server error."""

import dataclasses
import re

import pytest
from django.core.exceptions import ValidationError
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django_tasks_db.models import DBTaskResult

from casefiles.access import ADMIN_GROUP, LAWYER_GROUP, Role
from casefiles.audit import verify_log
from casefiles.models import AuditEntry
from casefiles.reviewing import ReviewStatus as S
from evidence import services as evidence_services
from evidence.models import EvidenceItem, Tag
from legal.models import BulkJob, ElementLink, LegalElement, ReviewAssignment, ReviewDecision
from legal.services import bulk, bulk_actions, links, review
from legal.tasks import run_bulk_job
from tests.factories import MembershipFactory, UserFactory
from tests.html import attrs, has_text
from tests.legal.helpers import many_items, withheld_item

pytestmark = pytest.mark.django_db

TORTURE = "RS-7-1-f.1"
CHAIN_LOCK = 1 if connection.vendor == "postgresql" else 0


def _post(client, cast, action, *, items=(), scope="selected", query="", **fields):
    data = {"action": action, "scope": scope, "query": query, **fields}
    data["item"] = [str(i.pk) if hasattr(i, "pk") else str(i) for i in items]
    return client.post(reverse("legal:bulk", args=[cast.case.reference]), data)


def _confirm(client, cast, action, **kwargs):
    """The confirmation page, then its Confirm button: the job's page."""
    page = _post(client, cast, action, **kwargs)
    assert page.status_code == 200, page.content[:800]
    assert "Items this will change" in page.content.decode()
    response = _post(client, cast, action, confirm="1", **kwargs)
    assert response.status_code == 302, response.content[:800]
    return response


def _counts(page: str) -> dict[str, str]:
    """The confirmation's counts, by their labels."""
    block = re.search(r'<dl class="facts confirm-count">(.*?)</dl>', page, re.S).group(1)
    pairs = re.findall(r"<dt>(.*?)</dt><dd>(?:<strong>)?(\d+)", block)
    return dict(pairs)


def _job(response) -> BulkJob:
    return BulkJob.objects.get(pk=int(response["Location"].rstrip("/").rsplit("/", 1)[1]))


def _named(action) -> list[str]:
    """Every item reference the chunk entries of ``action`` name, in order."""
    entries = AuditEntry.objects.filter(action=action).order_by("seq")
    return [ref for entry in entries for ref in entry.details["items"]]


@pytest.fixture
def items(cast):
    return many_items(cast.case, 6)


def test_the_confirmation_says_how_many_will_change_and_changes_nothing(client, cast, items):
    for item in items[:2]:
        review.decide(actor=cast.investigator, record=item, to_status=S.SUBMITTED)
    client.force_login(cast.lawyer)
    decisions = ReviewDecision.objects.count()
    entries = AuditEntry.objects.count()
    response = _post(client, cast, "submit", scope="all")
    page = response.content.decode()
    assert response.status_code == 200
    assert _counts(page) == {"Items chosen": "6", "Items this will change": "4"}
    assert "Left as they are:" in page
    assert "2: its review status is submitted" in page
    assert ReviewDecision.objects.count() == decisions
    assert AuditEntry.objects.count() == entries  # a confirmation is not a change
    assert EvidenceItem.objects.filter(review_status=S.NEW).count() == 4


def test_submit_in_bulk_takes_each_step_of_the_review_table(client, cast, items):
    review.decide(actor=cast.investigator, record=items[0], to_status=S.SUBMITTED)
    review.decide(actor=cast.lawyer, record=items[0], to_status=S.APPROVED)
    review.decide(actor=cast.investigator, record=items[1], to_status=S.SUBMITTED)
    review.decide(actor=cast.lead, record=items[1], to_status=S.RETURNED, comment="Blurred.")
    client.force_login(cast.lawyer)
    response = _confirm(client, cast, "submit", scope="all", query="kind=photo")
    job = _job(response)
    assert (job.status, job.total, job.changed, job.skipped) == (
        "done",
        6,
        5,
        {"status:approved": 1},
    )
    page = client.get(response["Location"]).content.decode()
    assert "1: its review status is approved" in page and 'http-equiv="refresh"' not in page
    changed = [i.reference for i in items[1:]]
    assert _named("review.bulk_submit") == changed
    made = ReviewDecision.objects.filter(actor=cast.lawyer, to_status=S.SUBMITTED)
    assert {(d.item.reference, d.from_status, d.sha256) for d in made} == {
        (i.reference, S.RETURNED if i == items[1] else S.NEW, i.original.sha256) for i in items[1:]
    }
    assert set(
        EvidenceItem.objects.filter(pk__in=[i.pk for i in items[1:]]).values_list(
            "review_status", flat=True
        )
    ) == {S.SUBMITTED}
    entry = AuditEntry.objects.get(action="review.bulk_submit")
    assert set(entry.details["bound"]["people_reviewdecision"]["rows"]) == {str(d.pk) for d in made}
    chain, bound = verify_log()
    assert chain.ok and bound.ok
    # Four eyes as for one item: who submitted them does not approve them.
    with pytest.raises(ValidationError, match="second person"):
        review.decide(actor=cast.lawyer, record=items[2], to_status=S.APPROVED)
    review.decide(actor=cast.lead, record=items[2], to_status=S.APPROVED)


def test_tags_are_added_and_taken_off_in_bulk(client, cast, items):
    evidence_services.update_item(actor=cast.investigator, item=items[0], tags=["morgue"])
    client.force_login(cast.lawyer)
    job = _job(_confirm(client, cast, "tag_add", items=items[:3], tag="morgue"))
    assert (job.changed, job.skipped) == (2, {"tagged": 1})
    assert _named("legal.bulk_tag_add") == [i.reference for i in items[1:3]]
    tagged = EvidenceItem.objects.filter(tags__name="morgue").order_by("pk")
    assert list(tagged) == items[:3]
    job = _job(_confirm(client, cast, "tag_remove", scope="all", query="tag=morgue", tag="morgue"))
    assert (job.total, job.changed) == (3, 3)
    assert not EvidenceItem.objects.filter(tags__name="morgue").exists()
    assert Tag.objects.filter(name="morgue").exists()  # the case's word stays
    job = _job(_confirm(client, cast, "tag_remove", items=items[:2], tag="morgue"))
    assert (job.changed, job.skipped) == (0, {"untagged": 2})
    page = client.get(reverse("legal:bulk_job", args=[cast.case.reference, job.pk]))
    assert "2: does not have this tag" in page.content.decode()


def test_the_sensitivity_is_set_in_bulk(client, cast, items):
    client.force_login(cast.investigator)
    job = _job(_confirm(client, cast, "sensitivity", items=items[:4], sensitivity="strict"))
    assert job.changed == 4
    job = _job(_confirm(client, cast, "sensitivity", scope="all", sensitivity="strict"))
    assert (job.changed, job.skipped) == (2, {"same_sensitivity": 4})
    assert set(EvidenceItem.objects.values_list("sensitivity", flat=True)) == {"strict"}
    entry = AuditEntry.objects.filter(action="legal.bulk_sensitivity").last()
    assert entry.details["sensitivity"] == "strict"
    assert entry.details["items"] == [i.reference for i in items[4:]]


def test_a_reviewer_is_assigned_and_taken_off_in_bulk(client, cast, items):
    client.force_login(cast.lead)
    job = _job(_confirm(client, cast, "assign", items=items[:3], reviewer=str(cast.lawyer.pk)))
    assert job.changed == 3
    assert set(ReviewAssignment.objects.values_list("reviewer", flat=True)) == {cast.lawyer.pk}
    job = _job(_confirm(client, cast, "assign", items=items[:4], reviewer=str(cast.lead.pk)))
    assert (job.changed, job.skipped) == (4, {})
    job = _job(_confirm(client, cast, "assign", items=items[:2], reviewer=str(cast.lead.pk)))
    assert job.skipped == {"assigned": 2}
    entry = AuditEntry.objects.filter(action="legal.bulk_assign").first()
    assert entry.details["reviewer"] == "lawyer"
    page = client.get(
        reverse("legal:workspace", args=[cast.case.reference]), {"assigned": cast.lead.pk}
    )
    assert page.content.decode().count('<span class="assigned">for lead</span>') == 4
    # Nobody is a choice of its own; the blank first choice chooses no one.
    assert _post(client, cast, "assign", scope="all", reviewer="").status_code == 400
    job = _job(_confirm(client, cast, "assign", scope="all", reviewer="nobody"))
    assert (job.changed, job.skipped) == (4, {"unassigned": 2})
    assert not ReviewAssignment.objects.exists()


@pytest.mark.parametrize("who", ["investigator", "observer", "outsider", "nobody"])
def test_only_a_member_who_may_review_is_assigned(client, cast, items, who):
    reviewer = {"nobody": "999999"}.get(who) or str(getattr(cast, who).pk)
    client.force_login(cast.lead)
    response = _post(client, cast, "assign", items=items[:1], reviewer=reviewer)
    assert response.status_code == 400
    assert not ReviewAssignment.objects.exists()


def test_items_are_linked_to_an_element_in_bulk(client, cast, items):
    element = LegalElement.objects.get(code=TORTURE)
    links.link_to_element(
        actor=cast.lead,
        case=cast.case,
        record=items[0],
        element=element,
        stance="supports",
        proposition="Marks of binding.",
    )
    client.force_login(cast.lawyer)
    fields = {"element": TORTURE, "stance": "supports", "proposition": "Ligature marks."}
    response = _post(client, cast, "link", items=items[:3], **fields)
    assert "Ligature marks." in response.content.decode()  # the confirmation repeats it
    job = _job(_confirm(client, cast, "link", items=items[:3], **fields))
    assert (job.changed, job.skipped) == (2, {"linked": 1})
    made = ElementLink.objects.filter(author=cast.lawyer)
    assert {link.item_id for link in made} == {items[1].pk, items[2].pk}
    assert {link.proposition for link in made} == {"Ligature marks."}
    entry = AuditEntry.objects.get(action="legal.bulk_link")
    assert entry.details["items"] == [items[1].reference, items[2].reference]
    assert set(entry.details["bound"]["legal_elementlink"]["rows"]) == {str(x.pk) for x in made}
    assert entry.details["element"] == TORTURE and "proposition" not in entry.details
    # A second lawyer confirms one as for any link.
    links.confirm_link(actor=cast.lead, link=made.first())
    chain, bound = verify_log()
    assert chain.ok and bound.ok


def test_a_link_needs_a_current_element_a_stance_and_words(client, cast, items):
    client.force_login(cast.lawyer)
    retired = LegalElement.objects.get(code=TORTURE)
    for fields in [
        {"element": TORTURE, "stance": "supports", "proposition": "  "},
        {"element": TORTURE, "stance": "", "proposition": "Marks."},
        {"element": "RS-NOPE", "stance": "supports", "proposition": "Marks."},
    ]:
        assert _post(client, cast, "link", items=items[:1], **fields).status_code == 400
    LegalElement.objects.filter(pk=retired.pk).update(retired_at="2026-01-01T00:00Z")
    fields = {"element": TORTURE, "stance": "supports", "proposition": "Marks."}
    assert _post(client, cast, "link", items=items[:1], **fields).status_code == 400
    assert not ElementLink.objects.exists()


@pytest.mark.parametrize(
    ("who", "action", "fields", "status"),
    [
        ("observer", "tag_add", {"tag": "x"}, 403),
        ("observer", "submit", {}, 403),
        (
            "investigator",
            "link",
            {"element": TORTURE, "stance": "supports", "proposition": "p"},
            403,
        ),
        ("investigator", "assign", {"reviewer": ""}, 403),
        ("outsider", "tag_add", {"tag": "x"}, 404),
        ("admin", "tag_add", {"tag": "x"}, 404),
        ("admin_member", "tag_add", {"tag": "x"}, 403),
    ],
)
def test_who_may_take_which_action(client, cast, items, who, action, fields, status):
    if who == "admin_member":  # a system admin given a role still reviews nothing
        admin = UserFactory(username="admin2", groups=[ADMIN_GROUP, LAWYER_GROUP])
        MembershipFactory(user=admin, case=cast.case, role=Role.LAWYER)
        client.force_login(admin)
    else:
        client.force_login(getattr(cast, who))
    for confirm in ({}, {"confirm": "1"}):
        response = _post(client, cast, action, items=items[:2], **fields, **confirm)
        assert response.status_code == status
    assert not BulkJob.objects.exists()
    assert not AuditEntry.objects.filter(action__startswith="legal.bulk").exists()


def test_the_service_refuses_who_may_not_take_the_action(cast, items):
    from django.core.exceptions import PermissionDenied

    with pytest.raises(PermissionDenied):
        bulk.start_bulk(
            actor=cast.observer,
            case=cast.case,
            action="submit",
            values={},
            selection=[items[0].pk],
            through=items[-1].pk,
        )


@pytest.mark.parametrize(
    "data",
    [
        {"action": "bogus", "scope": "selected", "item": ["1"]},
        {"action": "tag_add", "scope": "selected", "tag": "x"},  # nothing ticked
        {"action": "tag_add", "scope": "selected", "tag": "x", "item": ["abc"]},
        {"action": "tag_add", "scope": "selected", "tag": "x", "item": ["1\x00"]},
        {"action": "tag_add", "scope": "selected", "tag": "", "item": ["1"]},
        {"action": "tag_add", "scope": "selected", "tag": "x" * 61, "item": ["1"]},
        {"action": "tag_add", "scope": "everything", "tag": "x"},
        {"action": "tag_add", "scope": "all", "tag": "x", "query": "status=bogus"},
        {"action": "tag_add", "scope": "all", "tag": "x", "query": "near_group=x"},
        {"action": "tag_add", "scope": "all", "tag": "x", "query": "kind=\x00"},
        {"action": "tag_add", "scope": "all", "tag": "\x00"},
        {"action": "sensitivity", "scope": "all", "sensitivity": "top-secret"},
        {"action": "assign", "scope": "all", "reviewer": "\x00"},
    ],
)
def test_bad_input_is_refused_with_a_400_and_changes_nothing(client, cast, items, data):
    client.force_login(cast.lead)
    url = reverse("legal:bulk", args=[cast.case.reference])
    for confirm in ({}, {"confirm": "1"}):
        response = client.post(url, {**data, **confirm})
        assert response.status_code == 400, response.content[:500]
        assert "Nothing was changed." in response.content.decode()
    assert not BulkJob.objects.exists()
    assert client.get(url).status_code == 405


def test_items_of_another_case_are_not_touched(client, cast, items, other_case):
    theirs = many_items(other_case, 2)
    client.force_login(cast.lead)
    job = _job(_confirm(client, cast, "tag_add", items=[items[0], *theirs], tag="x"))
    assert (job.total, job.changed) == (1, 1)
    assert not EvidenceItem.objects.filter(case=other_case, tags__isnull=False).exists()


def test_items_taken_in_after_the_confirmation_do_not_join(client, cast, items):
    client.force_login(cast.lead)
    page = _post(client, cast, "tag_add", scope="all", tag="seen")
    through = items[-1].pk
    assert f'name="through" value="{through}"' in page.content.decode()
    later = many_items(cast.case, 2)
    response = _post(client, cast, "tag_add", scope="all", tag="seen", confirm="1", through=through)
    assert _job(response).changed == 6
    assert not EvidenceItem.objects.filter(pk__in=[i.pk for i in later], tags__isnull=False)


def test_a_withheld_item_is_skipped_for_who_may_not_read_its_statement(client, cast, photos):
    item = withheld_item(cast, photos)
    client.force_login(cast.investigator)
    job = _job(_confirm(client, cast, "sensitivity", items=photos, sensitivity="internal"))
    assert (job.changed, job.skipped) == (2, {"withheld": 1})
    assert EvidenceItem.objects.get(pk=item.pk).sensitivity == "confidential"
    page = client.get(reverse("legal:bulk_job", args=[cast.case.reference, job.pk]))
    assert "1: attached to a statement you may not read" in page.content.decode()


def test_more_than_500_items_run_as_a_task_with_a_progress_page(
    client, cast, django_capture_on_commit_callbacks, monkeypatch
):
    many = many_items(cast.case, 501)
    monkeypatch.setattr(bulk, "CHUNK", 200)
    client.force_login(cast.lawyer)
    page = _post(client, cast, "submit", scope="all", query="status=draft")
    assert _counts(page.content.decode())["Items this will change"] == "501"
    assert "runs in the background" in page.content.decode()
    with django_capture_on_commit_callbacks(execute=True):
        response = _post(client, cast, "submit", scope="all", query="status=draft", confirm="1")
    job = _job(response)
    assert (job.status, job.total, job.done) == ("pending", 501, 0)
    progress = client.get(response["Location"]).content.decode()
    assert 'http-equiv="refresh"' in progress and "0 / 501" in progress
    queued = DBTaskResult.objects.get()
    assert queued.task_path == "legal.tasks.run_bulk_job"
    assert queued.args_kwargs["args"] == [job.pk]
    # What `manage.py db_worker` does with the queued row.
    assert run_bulk_job.call(*queued.args_kwargs["args"]) == 501
    job.refresh_from_db()
    assert (job.status, job.done, job.changed) == ("done", 501, 501)
    assert 'http-equiv="refresh"' not in client.get(response["Location"]).content.decode()
    assert AuditEntry.objects.filter(action="review.bulk_submit").count() == 3  # chunks
    assert _named("review.bulk_submit") == [i.reference for i in many]
    assert ReviewDecision.objects.filter(to_status=S.SUBMITTED).count() == 501
    done = AuditEntry.objects.get(action="legal.bulk_done")
    assert (done.details["changed"], done.details["total"]) == (501, 501)
    chain, bound = verify_log()
    assert chain.ok and bound.ok


def test_500_items_run_at_once(client, cast):
    many_items(cast.case, 500)
    client.force_login(cast.lawyer)
    job = _job(_confirm(client, cast, "tag_add", scope="all", tag="x"))
    assert (job.status, job.changed) == ("done", 500)
    assert not DBTaskResult.objects.exists()


def _second_chunk_fails(monkeypatch):
    """Chunks of 2 items; the second chunk's write stops on a full disk (once)."""
    monkeypatch.setattr(bulk, "CHUNK", 2)
    real = bulk_actions.ACTIONS["tag_add"]
    calls = []

    def flaky(*args):
        calls.append(1)
        if len(calls) == 2:
            raise OSError("disk full")
        return real.apply(*args)

    monkeypatch.setitem(bulk_actions.ACTIONS, "tag_add", dataclasses.replace(real, apply=flaky))


def test_a_run_stopped_by_an_error_keeps_its_chunks_and_resumes_after_them(
    cast, items, monkeypatch
):
    _second_chunk_fails(monkeypatch)
    job = bulk.start_bulk(
        actor=cast.lead,
        case=cast.case,
        action="tag_add",
        values={"tag": "morgue"},
        through=items[-1].pk,
    )
    with pytest.raises(OSError):
        run_bulk_job.call(job.pk)
    job.refresh_from_db()
    assert (job.status, job.done, job.error) == ("failed", 2, "disk full")
    assert _named("legal.bulk_tag_add") == [i.reference for i in items[:2]]
    assert run_bulk_job.call(job.pk) == 6  # queued again: it goes on from the cursor
    job.refresh_from_db()
    assert (job.status, job.done, job.changed) == ("done", 6, 6)
    assert _named("legal.bulk_tag_add") == [i.reference for i in items]  # each once
    assert run_bulk_job.call(job.pk) == 6  # done: nothing more
    assert AuditEntry.objects.filter(action="legal.bulk_tag_add").count() == 3


def test_a_run_stopped_by_an_error_is_audited_with_the_error_and_how_far_it_got(
    cast, items, monkeypatch
):
    _second_chunk_fails(monkeypatch)
    job = bulk.start_bulk(
        actor=cast.lawyer,
        case=cast.case,
        action="tag_add",
        values={"tag": "morgue"},
        through=items[-1].pk,
    )
    with pytest.raises(OSError):
        run_bulk_job.call(job.pk)
    job.refresh_from_db()
    assert job.status == "failed"
    entry = AuditEntry.objects.get(action="legal.bulk_failed")
    assert (entry.actor, entry.case, entry.target_id) == (cast.lawyer, cast.case, str(job.pk))
    assert entry.details == {
        "bulk_action": "tag_add",
        "total": 6,
        "done": 2,
        "changed": 2,
        "error": "disk full",
    }
    chain, bound = verify_log()
    assert chain.ok and bound.ok


# A run: its status, whether the actor is a system admin, their role, the items (4);
# each chunk: the job and its items locked (2), the job's counts (1), the audit entry (2,
# and the chain's lock on PostgreSQL), in savepoints here (4); the close: the job and its
# entry, likewise (7). Then each action's own: the tag looked up, the rows written (and
# the decisions read back to bind them).
@pytest.mark.parametrize(
    ("action", "values", "own"),
    [
        ("submit", {}, 3),  # the decisions, the statuses, the decisions read back
        # the tag (at the start, and in the chunk), the rows; then the search index follows
        # the chunk's entry: the items it names, their old entries deleted, the items and
        # their tags read, the new entries written (5, whatever the chunk's size)
        ("tag_add", {"tag": "morgue"}, 3 + 5),
        ("sensitivity", {"sensitivity": "strict"}, 1),  # the items
    ],
)
def test_a_chunk_costs_the_same_queries_whatever_its_size(cast, action, values, own):
    Tag.objects.create(case=cast.case, name="morgue")  # made by the first chunk otherwise
    for size in (5, 40):
        items = many_items(cast.case, size)
        job = bulk.start_bulk(
            actor=cast.lawyer,
            case=cast.case,
            action=action,
            values=values,
            selection=[i.pk for i in items],
            through=items[-1].pk,
        )
        job = BulkJob.objects.select_related("actor", "case").get(pk=job.pk)
        with CaptureQueriesContext(connection) as run:
            bulk.run_bulk(job)
        assert job.changed == size
        queries = [q["sql"] for q in run.captured_queries]
        assert len(queries) == 20 + own + 2 * CHAIN_LOCK, queries


def _select(page, name):
    """The bulk form's select ``name``: its options as (value, label, chosen)."""
    html = page.content.decode()
    block = re.search(
        rf'<select name="{name}"[^>]*id="bulk-{name}"[^>]*>(.*?)</select>', html, re.S
    )[1]
    return [
        (value, re.sub(r"\s+", " ", label).strip(), " selected" in attrs)
        for value, attrs, label in re.findall(
            r'<option value="([^"]*)"([^>]*)>(.*?)</option>', block, re.S
        )
    ]


def test_the_bulk_form_chooses_no_action_and_no_reviewer_for_the_user(client, cast, items):
    client.force_login(cast.lead)
    page = client.get(reverse("legal:workspace", args=[cast.case.reference]))
    actions, reviewers = _select(page, "action"), _select(page, "reviewer")
    # Only the blank first choice is chosen: no action, no reviewer.
    assert [value for value, _, chosen in actions if chosen] == [""] == [actions[0][0]]
    assert [value for value, _, chosen in reviewers if chosen] == [""] == [reviewers[0][0]]
    assert ("nobody", "Nobody (removes the assignment)", False) in reviewers
    # Each action's fields say which action they are for (shown only with it, athar.css).
    assert 'class="for-action for-assign"' in page.content.decode()
    assert 'class="for-action for-tag_add for-tag_remove"' in page.content.decode()


def test_no_action_chosen_is_refused_saying_so_and_keeps_the_ticks_and_the_values(
    client, cast, items
):
    client.force_login(cast.lead)
    response = _post(client, cast, "", items=items[:2], tag="evidence of burns")
    assert response.status_code == 400
    assert has_text(response, "Choose a bulk action.")
    assert attrs(response, "value", "input").count(str(items[0].pk)) == 1
    assert str(items[1].pk) in attrs(response, "value", "input")
    assert "evidence of burns" in attrs(response, "value", "input")
    assert has_text(response, "Items ticked: 2.")
    assert not BulkJob.objects.exists()


def test_a_reviewer_must_be_chosen_and_nobody_says_it_takes_the_assignment_off(client, cast, items):
    client.force_login(cast.lead)
    _confirm(client, cast, "assign", items=items[:2], reviewer=str(cast.lawyer.pk))
    response = _post(client, cast, "assign", items=items[:2], reviewer="")
    assert response.status_code == 400
    assert has_text(response, "Choose a reviewer, or Nobody to remove the assignment.")
    assert ReviewAssignment.objects.count() == 2
    page = _post(client, cast, "assign", items=items[:2], reviewer="nobody")
    assert page.status_code == 200
    assert has_text(page, "Reviewer Nobody (removes the assignment)")
    _confirm(client, cast, "assign", items=items[:2], reviewer="nobody")
    assert not ReviewAssignment.objects.exists()


def test_only_the_chosen_actions_values_are_checked_and_used(client, cast, items):
    """Another action's fields, still filled in (no script, or a change of mind), neither
    refuse the form nor reach the job."""
    client.force_login(cast.lead)
    others = {"sensitivity": "top-secret", "reviewer": "\x00", "element": "bogus", "stance": "x"}
    job = _job(_confirm(client, cast, "tag_add", items=items[:2], tag="burns", **others))
    assert job.changed == 2 and job.params == {"tag": "burns"}
    assert set(EvidenceItem.objects.values_list("sensitivity", flat=True)) != {"top-secret"}
