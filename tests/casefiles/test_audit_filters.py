"""The audit log is filtered by each action some app declares, and by nothing else: a
value the filter does not know lists nothing and says so."""

import pytest
from django.db import connection, transaction
from django.urls import reverse

from casefiles import audit
from casefiles.audit_actions import declared_actions
from casefiles.models import AuditEntry

pytestmark = pytest.mark.django_db


def _record_every_declared_action(actor):
    with transaction.atomic():
        for code in sorted(declared_actions()):
            audit.record(actor, code)


def test_every_app_declares_its_actions_and_the_core_collects_them():
    declared = declared_actions()
    assert {"case.view", "auth.login", "evidence.download", "people.reveal_identity"} <= set(
        declared
    )
    assert all(str(label) for label in declared.values())


def test_each_declared_action_filters_the_log_to_its_own_entries(client, cast):
    _record_every_declared_action(cast.lead)
    client.force_login(cast.admin)
    url = reverse("casefiles:audit_list")
    for code in declared_actions():
        response = client.get(url, {"action": code, "actor": cast.lead.pk})
        assert response.status_code == 200, code
        assert [e.action for e in response.context["page"]] == [code], code


def test_filtering_by_downloads_lists_downloads_only(client, cast):
    with transaction.atomic():
        for code in ("evidence.view", "evidence.download", "case.view", "evidence.download"):
            audit.record(cast.lead, code)
    client.force_login(cast.admin)
    response = client.get(reverse("casefiles:audit_list"), {"action": "evidence.download"})
    assert [e.action for e in response.context["page"]] == ["evidence.download"] * 2
    assert "Original downloaded" in response.content.decode()


REFUSED = [
    {"action": "nope"},
    {"action": "evidence.downloads"},
    {"case": "x"},
    {"actor": "0"},
    {"at_after": "yesterday"},
    {"at_before": "2014-13-45"},
]


@pytest.mark.parametrize("query", REFUSED)
def test_a_filter_value_not_understood_lists_nothing_and_says_why(client, cast, query):
    _record_every_declared_action(cast.lead)
    client.force_login(cast.admin)
    response = client.get(reverse("casefiles:audit_list"), query)
    assert response.status_code == 400
    assert list(response.context["page"]) == []
    html = response.content.decode()
    assert "nothing is listed until it is corrected or cleared" in html
    assert "errorlist" in html  # the field's own message, next to it
    # What was asked is still in the form, to correct.
    assert response.context["filter"].form.data.get(next(iter(query))) == next(iter(query.values()))
    # Asking is still audited, with the refused filter.
    seen = AuditEntry.objects.filter(action="audit.view").latest("seq")
    assert seen.details["filters"] == query
    # No export link to follow: it would export nothing.
    assert "audit/export" not in html


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
@pytest.mark.parametrize("query", REFUSED)
def test_an_export_with_a_filter_not_understood_exports_nothing_and_says_why(
    client, cast, query, fmt
):
    _record_every_declared_action(cast.lead)
    client.force_login(cast.admin)
    before = AuditEntry.objects.count()
    response = client.get(reverse(f"casefiles:audit_export_{fmt}"), query)
    assert response.status_code == 400
    assert response["Content-Type"] == "text/plain; charset=utf-8"
    said = response.content.decode()
    assert said.startswith("A filter is not valid, so nothing is exported:\n"), said
    assert len(said.splitlines()) >= 2  # and which, with its message
    assert AuditEntry.objects.count() == before  # nothing exported, so no export entry


def test_the_audit_page_costs_a_fixed_number_of_queries_filtered_or_not(
    client, cast, django_assert_num_queries
):
    _record_every_declared_action(cast.lead)
    client.force_login(cast.admin)
    url = reverse("casefiles:audit_list")
    client.get(url)  # sessions and caches warm
    # PostgreSQL takes the audit chain's advisory lock before appending the view's entry.
    page = 13 + (connection.vendor == "postgresql")
    with django_assert_num_queries(page):
        client.get(url)
    # One more: the chosen actor is looked up to check it is one.
    with django_assert_num_queries(page + 1):
        client.get(url, {"action": "case.view", "actor": cast.lead.pk})
    with django_assert_num_queries(page):
        client.get(url, {"action": "evidence.download"})
