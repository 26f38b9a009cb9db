"""Comments on items and testimonies, with @mentions of case members; audited, kept as
written, refused to observers, to system admins and on statements the author may not read."""

import pytest
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import DatabaseError, connection, transaction
from django.urls import reverse

from casefiles.models import AuditEntry
from legal.models import Comment
from legal.services import comments
from tests.evidence.factories import EvidenceItemFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def item(cast):
    return EvidenceItemFactory(case=cast.case)


def test_a_comment_mentions_members_and_only_members(cast, item):
    comment = comments.add_comment(
        actor=cast.lawyer,
        case=cast.case,
        record=item,
        text="@lead please look at the wrists. @outsider @nobody (cc @investigator.)",
    )
    assert [u.username for u in comment.mentions.order_by("username")] == ["investigator", "lead"]
    entry = AuditEntry.objects.get(action="legal.comment")
    assert entry.details["mentions"] == ["investigator", "lead"]
    assert entry.details["bound"]["legal_comment"]["rows"].keys() == {str(comment.pk)}


def test_who_may_comment(cast, item):
    for who in (cast.observer, cast.outsider, cast.admin):
        with pytest.raises(PermissionDenied):
            comments.add_comment(actor=who, case=cast.case, record=item, text="Seen.")
    with pytest.raises(ValidationError):
        comments.add_comment(actor=cast.lawyer, case=cast.case, record=item, text="   ")
    comments.add_comment(actor=cast.investigator, case=cast.case, record=item, text="Taken in.")
    assert Comment.objects.count() == 1


def test_a_comment_is_kept_as_written(cast, item):
    comment = comments.add_comment(actor=cast.lawyer, case=cast.case, record=item, text="x")
    with pytest.raises(DatabaseError, match="append-only"), transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("UPDATE legal_comment SET text = 'y' WHERE id = %s", [comment.pk])


def test_commenting_from_the_item_page_and_seeing_ones_mentions(client, cast, item):
    client.force_login(cast.lawyer)
    url = reverse("legal:item_comment", args=[cast.case.reference, item.reference])
    response = client.post(url, {"text": "@lead the date differs from the witness's."})
    assert response.status_code == 302
    page = client.get(item.get_absolute_url()).content.decode()
    assert "the date differs" in page and "@lead" in page
    assert client.post(url, {"text": ""}).status_code == 400
    client.force_login(cast.lead)
    case_page = client.get(cast.case.get_absolute_url()).content.decode()
    assert "Comments that mention you" in case_page and item.reference in case_page
    client.force_login(cast.observer)
    assert (
        "Comments that mention you" not in client.get(cast.case.get_absolute_url()).content.decode()
    )
    assert client.post(url, {"text": "seen"}).status_code == 403
