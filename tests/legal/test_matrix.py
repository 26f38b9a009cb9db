"""Links to legal elements, their confirmation by a second lawyer, assessments, and the
evidence matrix a case's lawyers read them in (both languages, exact queries)."""

import csv
import io

import pytest
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import DatabaseError, connection, transaction
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from casefiles.models import AuditEntry
from legal.matrix import gaps, matrix_of
from legal.models import Assessment, ElementLink, LegalElement
from legal.services import assessments, links
from tests.evidence.factories import EvidenceItemFactory
from tests.html import attrs, has_text, shows

pytestmark = pytest.mark.django_db

TORTURE = "RS-7-1-f.1"
MURDER = "RS-7-1-a.1"
GRADES = {
    "reliability": "B",
    "credibility": "2",
    "consistency": "same",
    "geolocation": "locality",
    "rationale": "Military police numbering matches the branch's series.",
}


def _element(code):
    return LegalElement.objects.get(code=code)


def _link(cast, record, code=TORTURE, stance="supports", who=None):
    return links.link_to_element(
        actor=who or cast.lawyer,
        case=cast.case,
        record=record,
        element=_element(code),
        stance=stance,
        proposition="Ligature marks on both wrists, as witnesses describe at branch 215.",
    )


@pytest.fixture
def items(cast):
    return [EvidenceItemFactory(case=cast.case) for _ in range(3)]


def test_a_link_counts_as_reviewed_only_once_a_second_lawyer_confirms_it(cast, items):
    link = _link(cast, items[0])
    row = _row(cast, TORTURE)
    assert (row.cells["supports"].reviewed, row.cells["supports"].unreviewed) == (0, 1)
    assert row.gap
    with pytest.raises(ValidationError, match="second lawyer"):
        links.confirm_link(actor=cast.lawyer, link=link)
    links.confirm_link(actor=cast.lead, link=link, note="Checked against the photo.")
    row = _row(cast, TORTURE)
    assert (row.cells["supports"].reviewed, row.cells["supports"].unreviewed) == (1, 0)
    assert not row.gap and row.cells["supports"].items == 1
    with pytest.raises(ValidationError, match="already"):
        links.confirm_link(actor=cast.lead, link=link)
    actions = list(AuditEntry.objects.order_by("seq").values_list("action", flat=True))
    assert actions[-2:] == ["legal.link", "legal.link_confirm"]


def test_who_may_link(cast, items):
    with pytest.raises(PermissionDenied):
        _link(cast, items[0], who=cast.investigator)  # investigators take in; lawyers link
    with pytest.raises(PermissionDenied):
        _link(cast, items[0], who=cast.admin)
    with pytest.raises(ValidationError):
        links.link_to_element(
            actor=cast.lawyer,
            case=cast.case,
            record=items[0],
            element=_element(TORTURE),
            stance="supports",
            proposition="   ",
        )
    retired = _element(MURDER)
    retired.retired_at = timezone.now()
    retired.save()
    with pytest.raises(ValidationError, match="retired"):
        _link(cast, items[0], code=MURDER)
    assert not ElementLink.objects.exists()


def test_a_withdrawn_link_no_longer_counts_and_stays_in_the_history(cast, items):
    link = _link(cast, items[0], stance="contradicts")
    with pytest.raises(ValidationError):
        links.withdraw_link(actor=cast.lawyer, link=link, reason=" ")
    links.withdraw_link(actor=cast.lawyer, link=link, reason="Wrong photo.")
    assert _row(cast, TORTURE).cells["contradicts"].total == 0
    assert ElementLink.objects.filter(pk=link.pk).exists()
    with pytest.raises(ValidationError, match="withdrawn"):
        links.confirm_link(actor=cast.lead, link=link)


def test_links_and_assessments_are_refused_update_and_delete_by_the_database(cast, items):
    link = _link(cast, items[0])
    assessment = assessments.assess(actor=cast.lawyer, case=cast.case, record=items[0], **GRADES)
    for model, row in ((ElementLink, link), (Assessment, assessment)):
        table = model._meta.db_table
        for sql in (
            f"UPDATE {table} SET at = at WHERE id = %s",
            f"DELETE FROM {table} WHERE id = %s",
        ):
            with pytest.raises(DatabaseError, match="append-only"), transaction.atomic():
                with connection.cursor() as cursor:
                    cursor.execute(sql, [row.pk])


def test_each_assessor_s_latest_grading_is_shown_side_by_side(client, cast, items):
    item = items[0]
    assessments.assess(actor=cast.lawyer, case=cast.case, record=item, **GRADES)
    later = {**GRADES, "reliability": "C", "credibility": "3", "rationale": "Second look."}
    assessments.assess(actor=cast.lawyer, case=cast.case, record=item, **later)
    other = {**GRADES, "reliability": "A", "credibility": "1", "consistency": "partly"}
    assessments.assess(actor=cast.lead, case=cast.case, record=item, **other)
    assert [
        (a.assessor.username, a.reliability + a.credibility)
        for a in assessments.latest_assessments(item)
    ] == [("lawyer", "C3"), ("lead", "A1")]
    client.force_login(cast.lawyer)
    page = client.get(item.get_absolute_url())
    # Never averaged, the latest only (read as shown: a CSRF token can hold "B2").
    assert has_text(page, "C3") and has_text(page, "A1") and not shows(page, "B2")
    assert Assessment.objects.count() == 3  # the first is kept
    assert AuditEntry.objects.filter(action="legal.assess").count() == 3


def test_the_assessment_form_refuses_a_grade_off_the_scale_and_keeps_what_was_typed(
    client, cast, items
):
    client.force_login(cast.lawyer)
    url = reverse("legal:item_assess", args=[cast.case.reference, items[0].reference])
    response = client.post(url, {**GRADES, "reliability": "G", "rationale": "Kept as typed"})
    assert response.status_code == 400
    assert has_text(response, "Kept as typed")
    assert not Assessment.objects.exists()


def test_linking_from_the_item_page(client, cast, items):
    client.force_login(cast.lawyer)
    item = items[0]
    page = client.get(item.get_absolute_url())
    assert shows(page, TORTURE) and shows(page, "VStGB-7-1-5.1")  # both jurisdictions
    url = reverse("legal:item_link", args=[cast.case.reference, item.reference])
    response = client.post(
        url, {"element": TORTURE, "stance": "supports", "proposition": "Bruising, wrists."}
    )
    assert response.status_code == 302
    assert ElementLink.objects.get().element.code == TORTURE
    response = client.post(url, {"element": "RS-99", "stance": "supports", "proposition": "x"})
    assert response.status_code == 400


def _row(cast, code):
    for group in matrix_of(cast.case):
        for row in group.rows:
            if row.element.code == code:
                return row
    raise AssertionError(code)


MATRIX_QUERIES = 12  # sign-in, case, audit entry, counts, elements (+ the lock on PostgreSQL)


@pytest.mark.parametrize("language", ["en", "ar"])
def test_the_matrix_shows_counts_and_gaps_in_both_languages_at_a_fixed_cost(
    client, cast, items, language
):
    confirmed = _link(cast, items[0])
    links.confirm_link(actor=cast.lead, link=confirmed)
    _link(cast, items[1])
    _link(cast, items[2], code=MURDER, stance="context")
    client.force_login(cast.lawyer)
    client.cookies["django_language"] = language
    url = reverse("legal:matrix", args=[cast.case.reference])
    client.get(url)
    for extra in range(3):  # the cost does not grow with the links
        _link(cast, items[extra], code="RS-7-1-e.1", stance="contradicts")
        with CaptureQueriesContext(connection) as page:
            response = client.get(url)
        lock = 1 if connection.vendor == "postgresql" else 0
        assert len(page.captured_queries) == MATRIX_QUERIES + lock, [
            q["sql"] for q in page.captured_queries
        ]
    html = response.content.decode()
    assert response.status_code == 200
    if language == "ar":
        assert 'dir="rtl"' in html and has_text(html, "مصفوفة الأدلة")
        assert has_text(html, "ألحق مرتكب الجريمة ألمًا شديدًا")
    else:
        assert has_text(html, "Evidence matrix")
        assert has_text(html, "The perpetrator inflicted severe physical or mental pain")
    torture = reverse("legal:element_links", args=[cast.case.reference, TORTURE])
    assert f"{torture}?stance=supports&reviewed=1" in attrs(html, "href")
    assert f"{torture}?stance=supports&reviewed=0" in attrs(html, "href")
    assert html.count('class="gap"') == len(gaps(matrix_of(cast.case)))
    listed = client.get(f"{torture}?stance=supports&reviewed=1")
    assert has_text(listed, items[0].reference) and not shows(listed, items[1].reference)
    assert AuditEntry.objects.filter(action="legal.matrix").exists()


def test_the_matrix_csv_is_audited_and_safe_to_open(client, cast, items):
    link = links.link_to_element(
        actor=cast.lawyer,
        case=cast.case,
        record=items[0],
        element=_element(TORTURE),
        stance="supports",
        proposition='=HYPERLINK("http://example.org")',
    )
    links.confirm_link(actor=cast.lead, link=link)
    client.force_login(cast.lawyer)
    response = client.get(reverse("legal:matrix_csv", args=[cast.case.reference]))
    assert response.status_code == 200
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    torture = next(r for r in rows if r["element"] == TORTURE)
    assert torture["supports_reviewed"] == "1" and torture["gap"] == "no"
    assert next(r for r in rows if r["element"] == MURDER)["gap"] == "yes"
    assert all(not v.startswith(("=", "+", "@")) for r in rows for v in r.values())
    entry = AuditEntry.objects.get(action="legal.matrix_export")
    assert entry.details["rows"] == len(rows)
    client.force_login(cast.observer)
    assert client.get(reverse("legal:matrix_csv", args=[cast.case.reference])).status_code == 404
