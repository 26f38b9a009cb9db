import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management import call_command
from django.urls import reverse

from casefiles.audit import verify_chain
from casefiles.management.commands.seed_demo import DEMO_USERS, demo_password
from casefiles.models import AuditEntry, Case, Membership

pytestmark = pytest.mark.django_db


def test_seed_demo_is_idempotent():
    call_command("seed_demo")
    counts = (Case.objects.count(), Membership.objects.count(), AuditEntry.objects.count())
    call_command("seed_demo")
    assert counts == (
        Case.objects.count(),
        Membership.objects.count(),
        AuditEntry.objects.count(),
    )
    assert counts[0] == 2
    assert get_user_model().objects.count() == len(DEMO_USERS)
    assert verify_chain().ok


def test_demo_cases_hold_arabic_and_english_text():
    call_command("seed_demo")
    text = " ".join(Case.objects.values_list("title", flat=True))
    assert "Photographs" in text and "صور" in text


def test_the_demo_investigator_signs_in_and_sees_exactly_their_cases(client, settings):
    settings.ATHAR_DEMO_MODE = True  # as `make run` sets it: demo accounts need no device
    call_command("seed_demo")
    response = client.post(
        reverse("login"),
        {"username": "investigator", "password": demo_password("investigator")},
        follow=True,
    )
    assert [c.reference for c in response.context["cases"]] == ["DEMO-2014-001"]
    assert client.get(reverse("casefiles:case_detail", args=["DEMO-2013-007"])).status_code == 404


def test_system_groups_exist_and_the_admin_group_can_manage_access():
    assert set(Group.objects.values_list("name", flat=True)) >= {"Investigator", "Lawyer", "Admin"}
    perms = set(Group.objects.get(name="Admin").permissions.values_list("codename", flat=True))
    assert {"add_membership", "change_membership", "view_auditentry", "add_case"} <= perms
    assert "delete_membership" not in perms and "delete_auditentry" not in perms


def test_demo_evidence_is_taken_in_once_through_the_pipeline():
    from evidence.models import EvidenceItem

    call_command("seed_demo")
    call_command("seed_demo_evidence")
    call_command("seed_demo_evidence")
    items = EvidenceItem.objects.filter(case__reference="DEMO-2014-001")
    assert items.count() == 13
    assert items.filter(near_group__isnull=False).count() >= 2
    assert verify_chain().ok
