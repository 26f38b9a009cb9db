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


def test_a_comment_too_long_is_refused_in_words_and_kept_whole(client, cast, item):
    """No maxlength for the browser to cut a pasted text at: the limit is said under the
    box, and the server refuses more, on a page that keeps every character typed."""
    from tests.html import attrs, has_text

    client.force_login(cast.lawyer)
    page = client.get(item.get_absolute_url())
    assert attrs(page, "maxlength", tag="textarea") == []
    assert has_text(page, "At most 5000 characters.")
    described = [v.split() for v in attrs(page, "aria-describedby", tag="textarea")]
    assert any("id_text-limit" in ids for ids in described)
    assert "id_text-limit" in attrs(page, "id", tag="span")
    url = reverse("legal:item_comment", args=[cast.case.reference, item.reference])
    typed = "الشاهد يذكر التاريخ " * 250 + "and the end of it"  # 5017 characters
    for language, said in [
        ("en", "Ensure this value has at most 5000 characters (it has 5017)."),
        ("ar", "تحتوي على 5000 حرف أو رمز على الأكثر (هي تحتوي حالياً على 5017)"),
    ]:
        response = client.post(url, {"text": typed}, HTTP_ACCEPT_LANGUAGE=language)
        assert response.status_code == 400
        assert has_text(response, said)
        assert f">\n{typed}</textarea>" in response.content.decode()
    assert not Comment.objects.exists()
    arabic = client.get(item.get_absolute_url(), HTTP_ACCEPT_LANGUAGE="ar")
    assert has_text(arabic, "5000 حرفاً على الأكثر.")
