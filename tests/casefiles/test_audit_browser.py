"""The audit browser: target filter, CSV and JSON-lines exports, "who saw this"."""

import csv
import io
import json
import re

import pytest
from django.urls import reverse

from casefiles import audit
from casefiles.audit import entry_hash
from casefiles.models import AuditEntry

pytestmark = pytest.mark.django_db


@pytest.fixture
def history(cast, other_case):
    """Views of two objects of the case by several members, and one elsewhere."""
    audit.record(cast.lawyer, "case.view", target=cast.lead, case=cast.case)
    audit.record(cast.investigator, "case.view", target=cast.lead, case=cast.case)
    audit.record(cast.lawyer, "case.view", target=cast.observer, case=cast.case)
    audit.record(cast.lawyer, "case.view", target=cast.lead, case=other_case)
    audit.record(None, "case.update", label='=HYPERLINK("http://x")', text="خط عربي")


def _body(response):
    return b"".join(response.streaming_content).decode()


def test_admins_filter_by_target(client, cast, history):
    client.force_login(cast.admin)
    response = client.get(
        reverse("casefiles:audit_list"),
        {"target_type": "auth.user", "target_id": str(cast.lead.pk), "case": cast.case.pk},
    )
    assert [(e.actor, e.target_id) for e in response.context["page"]] == [
        (cast.investigator, str(cast.lead.pk)),
        (cast.lawyer, str(cast.lead.pk)),
    ]


def test_the_json_lines_export_holds_the_selection_with_hashes_and_is_audited(
    client, cast, history
):
    client.force_login(cast.admin)
    response = client.get(reverse("casefiles:audit_export_jsonl"), {"action": "case.view"})
    assert response.status_code == 200
    assert response["Content-Type"].startswith("application/x-ndjson")
    rows = [json.loads(line) for line in _body(response).splitlines()]
    assert [r["action"] for r in rows] == ["case.view"] * 4
    assert [r["seq"] for r in rows] == sorted(r["seq"] for r in rows)
    for row in rows:  # an outsider can recompute each hash from the exported fields
        import datetime

        values = {**row, "at": datetime.datetime.fromisoformat(row["at"])}
        assert entry_hash(row["prev_hash"], values) == row["hash"]
    entry = AuditEntry.objects.filter(action="audit.export").get()
    assert entry.actor == cast.admin
    assert entry.details["format"] == "jsonl"
    assert entry.details["filters"] == {"action": "case.view"}
    assert entry.details["up_to_seq"] == entry.seq - 1


def test_the_csv_export_neutralises_formulas_and_keeps_arabic(client, cast, history):
    client.force_login(cast.admin)
    response = client.get(reverse("casefiles:audit_export_csv"), {"action": "case.update"})
    assert response["Content-Type"].startswith("text/csv")
    header, row = list(csv.reader(io.StringIO(_body(response))))
    details = json.loads(row[header.index("details")])
    assert details["text"] == "خط عربي"
    assert details["label"].startswith("=")  # inside the JSON cell, not at its start
    assert all(not cell.startswith(("=", "+", "@")) for cell in row)


def test_only_admins_export(client, cast, history):
    client.force_login(cast.lead)
    assert client.get(reverse("casefiles:audit_export_csv")).status_code == 403
    assert not AuditEntry.objects.filter(action="audit.export").exists()


def test_a_lead_sees_who_saw_an_object_of_their_case_and_that_is_audited(client, cast, history):
    url = reverse(
        "casefiles:case_target_audit", args=[cast.case.reference, "auth.user", cast.lead.pk]
    )
    client.force_login(cast.lead)
    response = client.get(url)
    assert response.status_code == 200
    assert [e.actor for e in response.context["page"]] == [cast.investigator, cast.lawyer]
    entry = AuditEntry.objects.filter(action="audit.view_target").get()
    assert (entry.actor, entry.case, entry.details["target_id"]) == (
        cast.lead,
        cast.case,
        str(cast.lead.pk),
    )


def test_who_saw_this_is_404_for_members_who_are_not_leads_and_for_outsiders(client, cast, history):
    url = reverse(
        "casefiles:case_target_audit", args=[cast.case.reference, "auth.user", cast.lead.pk]
    )
    for user in (cast.lawyer, cast.investigator, cast.observer, cast.outsider, cast.admin):
        client.force_login(user)
        assert client.get(url).status_code == 404, user


def test_the_case_page_links_its_leads_to_who_saw_the_case(client, cast):
    client.force_login(cast.lawyer)
    client.get(cast.case.get_absolute_url())
    assert "Who saw this case" not in client.get(cast.case.get_absolute_url()).content.decode()
    client.force_login(cast.lead)
    page = client.get(cast.case.get_absolute_url()).content.decode()
    url = reverse(
        "casefiles:case_target_audit", args=[cast.case.reference, "casefiles.case", cast.case.pk]
    )
    assert f'href="{url}"' in page
    viewers = [e.actor for e in client.get(url).context["page"]]
    assert viewers == [cast.lead, cast.lawyer, cast.lawyer]


def test_paging_the_log_shows_every_entry_once_though_each_view_is_logged(client, cast):
    for n in range(60):
        audit.record(None, "case.update", n=n)
    client.force_login(cast.admin)
    url = reverse("casefiles:audit_list")
    before_first = set(AuditEntry.objects.values_list("seq", flat=True))
    first = client.get(url)
    older = re.search(r'rel="next" href="\?([^"]*)"', first.content.decode()).group(1)
    second = client.get(f"{url}?{older.replace('&amp;', '&')}")
    shown = [e.seq for e in first.context["page"]] + [e.seq for e in second.context["page"]]
    # Every entry up to the first view, newest first, none skipped or shown twice: the
    # second page follows the first by entry number, and the first view's own entry
    # (written after it read its page) does not push an entry onto both pages.
    assert shown == sorted(before_first)[::-1]
    assert AuditEntry.objects.filter(action="audit.view").count() == 2
    newer = re.search(r'rel="prev" href="\?([^"]*)"', second.content.decode()).group(1)
    back = client.get(f"{url}?{newer.replace('&amp;', '&')}")
    assert [e.seq for e in back.context["page"]] == shown[:50]


@pytest.mark.parametrize("odd", ["²", "9" * 5000, "9" * 19, "-1", "x", "1\x00"])
def test_a_page_position_the_log_never_gave_shows_the_newest_entries(client, cast, odd):
    for n in range(60):
        audit.record(None, "case.update", n=n)
    client.force_login(cast.admin)
    url = reverse("casefiles:audit_list")
    newest = _head_before_view
    response = client.get(url, {"before": odd})
    assert response.status_code == 200
    assert response.context["page"].rows[0].seq == newest()
    assert "That page position is not valid" in response.content.decode()


def _head_before_view() -> int:
    return AuditEntry.objects.order_by("-seq").values_list("seq", flat=True)[1]
