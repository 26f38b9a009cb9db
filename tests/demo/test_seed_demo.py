"""`manage.py seed_demo` loads the whole demo story through the services, once."""

import io

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse

from casefiles.audit import verify_chain
from casefiles.models import AuditCheckpoint, AuditEntry, Case, Membership
from demo import photos, story
from demo.story import DEMO_USERS, demo_password
from evidence.models import CustodyEvent, EvidenceItem, Identification, IntakeBatch
from legal.models import Assessment, ElementLink, LinkConfirmation, ReviewDecision
from people import models as people_models  # its Test* classes: not collected by pytest
from people.models import (
    CaseRole,
    Consent,
    Person,
    ProtectionChange,
    Relation,
)

pytestmark = pytest.mark.django_db

CASE = story.MAIN_CASE
# The demo victim's detainee number and detention branch (story.MISSING).
DETAINEE_NUMBER = "4417/000 (fictional)"
BRANCH = "Branch 000, an interrogation branch (fictional)"


@pytest.fixture(autouse=True)
def _data_dir(tmp_path, settings):
    """The demo's media and checkpoints go to the test's folder, never under var/."""
    settings.DATA_DIR = tmp_path / "data"
    settings.ATHAR_CHECKPOINT_KEY_FILE = tmp_path / "data" / "checkpoint_key.pem"


def seed() -> str:
    out = io.StringIO()
    call_command("seed_demo", stdout=out)
    return out.getvalue()


@pytest.fixture
def seeded():
    seed()
    return Case.objects.get(reference=CASE)


def _counts():
    return [
        m.objects.count()
        for m in (
            get_user_model(),
            Case,
            Membership,
            AuditEntry,
            AuditCheckpoint,
            IntakeBatch,
            EvidenceItem,
            CustodyEvent,
            Person,
            CaseRole,
            Relation,
            ProtectionChange,
            people_models.Testimony,
            people_models.TestimonyVersion,
            ReviewDecision,
            Consent,
            Identification,
            Assessment,
            ElementLink,
            LinkConfirmation,
        )
    ]


def test_seed_demo_is_idempotent_and_says_so():
    assert "objects created" in seed()
    counts = _counts()
    assert "nothing to do" in seed()
    assert _counts() == counts
    assert counts[1] == 2  # two cases
    assert get_user_model().objects.count() == len(DEMO_USERS)
    assert verify_chain().ok


def test_an_interrupted_seed_is_completed_by_the_next_run(monkeypatch):
    from demo.seed import Seeder

    monkeypatch.setattr(Seeder, "testimony", lambda self: 1 / 0)
    with pytest.raises(ZeroDivisionError):
        seed()
    monkeypatch.undo()
    seed()
    assert people_models.Testimony.objects.get().status == people_models.Testimony.Status.APPROVED
    assert Person.objects.count() == 4  # the people of the first run, not registered again
    assert verify_chain().ok


def test_demo_data_is_refused_in_production(settings):
    settings.PRODUCTION = True
    with pytest.raises(CommandError, match="never loaded in production"):
        seed()
    assert not Case.objects.exists() and not get_user_model().objects.exists()


def test_demo_cases_hold_arabic_and_english_text(seeded):
    text = " ".join(Case.objects.values_list("title", flat=True))
    assert "Photographs" in text and "صور" in text


def test_every_demo_account_signs_in_with_its_password_alone_in_demo_mode(client, settings):
    settings.ATHAR_DEMO_MODE = True  # as `make run` sets it: demo accounts need no device
    seed()
    for username, *_ in DEMO_USERS:
        client.logout()
        response = client.post(
            reverse("login"),
            {"username": username, "password": demo_password(username)},
            follow=True,
        )
        assert response.wsgi_request.user.get_username() == username, username


def test_the_demo_investigator_signs_in_and_sees_exactly_their_cases(client, settings):
    settings.ATHAR_DEMO_MODE = True
    seed()
    response = client.post(
        reverse("login"),
        {"username": "investigator", "password": demo_password("investigator")},
        follow=True,
    )
    assert [c.reference for c in response.context["cases"]] == [CASE]
    assert client.get(reverse("casefiles:case_detail", args=["DEMO-2013-007"])).status_code == 404


def test_system_groups_exist_and_the_admin_group_can_manage_access():
    assert set(Group.objects.values_list("name", flat=True)) >= {"Investigator", "Lawyer", "Admin"}
    perms = set(Group.objects.get(name="Admin").permissions.values_list("codename", flat=True))
    assert {"add_membership", "change_membership", "view_auditentry", "add_case"} <= perms
    assert "delete_membership" not in perms and "delete_auditentry" not in perms


def test_the_photographs_are_one_intake_batch_with_exif_gps_custody_and_near_duplicates(seeded):
    (batch,) = IntakeBatch.objects.filter(case=seeded)
    items = EvidenceItem.objects.filter(case=seeded)
    assert batch.finished_at is not None
    assert batch.acquired_from == story.CARD_SOURCE and batch.medium == story.CARD_MEDIUM
    assert items.count() == batch.stored == photos.CARD_PHOTOS + 1  # and the card's note
    assert batch.flagged == batch.failed == batch.duplicate == 0
    assert batch.custodian_manifest is not None  # the custodian's list, checked: all match
    photo_items = items.filter(kind=EvidenceItem.Kind.PHOTO)
    assert photo_items.count() == photos.CARD_PHOTOS
    for item in photo_items.select_related("provenance"):
        p = item.provenance
        assert (p.camera_make, p.camera_model) == ("NIKON CORPORATION", "NIKON D90")
        assert p.taken_at.startswith("2013:08:") and p.taken_date is not None
        assert 33.48 < float(p.gps_latitude) < 33.50 and 36.21 < float(p.gps_longitude) < 36.22
    # Each item's acquisition is its first custody event; one photo has a later link.
    acquired = CustodyEvent.objects.filter(item__case=seeded, action="acquired")
    assert acquired.count() == items.count()
    assert CustodyEvent.objects.filter(item__case=seeded, action="transferred").count() == 1
    groups = {}
    for ref, group in photo_items.exclude(near_group=None).values_list("reference", "near_group"):
        groups.setdefault(group, []).append(ref)
    assert len(groups) == photos.PAIRS and all(len(g) == 2 for g in groups.values())
    # The README's intake example has its second stick, not yet taken in.
    stick = seeded_data_dir() / "demo" / "usb-stick"
    assert len(list(stick.rglob("*.JPG"))) == 6 and stick.with_suffix(".sha256").is_file()


def seeded_data_dir():
    from django.conf import settings

    return settings.DATA_DIR


def test_three_witnesses_at_three_levels_and_a_missing_victim(seeded):
    roles = {}
    for role in CaseRole.objects.filter(case=seeded).select_related("person"):
        roles.setdefault(role.person.code, set()).add(role.role)
    witnesses = Person.objects.filter(case_roles__role="witness").order_by("code")
    assert [w.protection_level for w in witnesses] == ["standard", "high", "critical"]
    for person in Person.objects.all():
        identity = person.open_identity()
        assert identity.name_ar and identity.name_latin
        assert any("\u0600" <= ch <= "\u06ff" for ch in identity.name_ar)
        assert identity.name_latin.isascii()
    high, critical = witnesses[1], witnesses[2]
    assert roles[high.code] == {"witness", "family"}
    assert roles[critical.code] == {"witness", "source"}
    # High was raised from standard, with the reason, on the record.
    (change,) = ProtectionChange.objects.filter(person=high)
    assert (change.from_level, change.to_level) == ("standard", "high") and change.reason
    (victim,) = Person.objects.filter(case_roles__role="victim")
    assert victim.victim_status == Person.VictimStatus.MISSING
    assert victim.last_seen_on and victim.last_seen_place
    opened = victim.antemortem_profile.open()  # what identifies him: sealed there only
    assert (opened.detainee_number, opened.detention_branch) == (DETAINEE_NUMBER, BRANCH)
    assert Relation.objects.filter(person=high, kind="mother", other=victim).exists()


def test_an_arabic_testimony_in_two_versions_approved_by_a_second_person(seeded):
    (testimony,) = people_models.Testimony.objects.filter(case=seeded)
    assert (
        testimony.language == "ar" and testimony.status == people_models.Testimony.Status.APPROVED
    )
    v1, v2 = testimony.versions.order_by("number")
    assert v1.text != v2.text and "المهجع رقم ٣" in v2.text and v2.reason
    submitted, approved = ReviewDecision.objects.filter(testimony=testimony).order_by("pk")
    assert submitted.to_status == "submitted" and approved.to_status == "approved"
    # Four eyes: whoever approved wrote no version and did not submit it.
    assert approved.actor not in {v1.author, v2.author, submitted.actor}
    assert approved.actor.get_username() == "lead"


def test_consents_given_and_one_withdrawn(seeded):
    grants = Consent.objects.filter(case=seeded, kind=Consent.Kind.GRANT)
    assert grants.count() == 3
    assert {g.person.code for g in grants} == set(
        Person.objects.filter(case_roles__role="witness").values_list("code", flat=True)
    )
    (withdrawal,) = Consent.objects.filter(case=seeded, kind=Consent.Kind.WITHDRAWAL)
    assert withdrawal.scopes == ["publication"]
    from people import services as people_services

    assert "publication" not in people_services.consent_in_force(withdrawal.withdraws)
    testimony = people_models.Testimony.objects.get(case=seeded)
    assert people_services.may_share_testimony(testimony=testimony, purpose="prosecution")


def test_a_mother_identifies_the_missing_victim_in_one_photograph(seeded):
    (identification,) = Identification.objects.filter(case=seeded)
    assert identification.witness.case_roles.filter(role="family").exists()
    assert identification.identified.victim_status == "missing"
    assert identification.item.kind == EvidenceItem.Kind.PHOTO
    assert identification.item.original_path.endswith(photos.card_name(30))
    assert identification.confidence == "certain" and identification.method == "photo"


def test_every_step_is_audited_and_a_checkpoint_signs_it_all(seeded):
    actions = set(AuditEntry.objects.values_list("action", flat=True))
    assert {
        "case.create",
        "membership.grant",
        "evidence.batch_open",
        "evidence.intake",
        "evidence.batch_done",
        "evidence.custody",
        "evidence.identification",
        "people.register",
        "people.add_role",
        "people.relate",
        "people.protection_change",
        "testimony.create",
        "testimony.revise",
        "review.submit",
        "review.approve",
        "consent.record",
        "consent.withdraw",
        "legal.assess",
        "legal.link",
        "legal.link_confirm",
    } <= actions, actions
    checkpoint = AuditCheckpoint.objects.get()
    last = AuditEntry.objects.order_by("-seq").first()
    assert last.action == "audit.checkpoint"
    assert checkpoint.size == last.seq - 1  # every entry before its own
    assert verify_chain().ok


def test_the_lawyers_assessed_linked_and_left_a_gap(client, seeded):
    from django.urls import reverse

    from casefiles.reviewing import ReviewStatus
    from legal.matrix import gaps, matrix_of

    photo = EvidenceItem.objects.get(title=story.IDENTIFICATION["title"])
    assert photo.review_status == ReviewStatus.APPROVED
    graded = {
        (a.assessor.username, a.reliability + a.credibility) for a in Assessment.objects.all()
    }
    assert graded == {("lawyer", "B2"), ("lead", "A2"), ("lawyer", "B3")}
    assert ElementLink.objects.count() == len(story.LINKS)
    assert LinkConfirmation.objects.count() == 3
    matrix = matrix_of(seeded)
    rows = {row.element.code: row for group in matrix for row in group.rows}
    assert not rows["RS-7-1-a.1"].gap and not rows["RS-7-1-f.1"].gap
    assert rows["RS-7-1-e.1"].gap  # supported, but not yet confirmed by a second lawyer
    assert rows["RS-7-1-i.2"] in [r for r in rows.values() if r.gap]
    assert gaps(matrix)
    graphic = EvidenceItem.objects.filter(case=seeded, is_graphic=True).order_by("reference")
    assert list(graphic.values_list("reference", flat=True)) == [f"EV-{n:06d}" for n in range(1, 7)]
    client.force_login(get_user_model().objects.get(username="lawyer"))
    for language, heading in (("en", "Evidence matrix"), ("ar", "مصفوفة الأدلة")):
        client.cookies["django_language"] = language
        page = client.get(reverse("legal:matrix", args=[CASE])).content.decode()
        assert heading in page and 'class="gap"' in page


def test_the_demo_case_has_an_incident_with_acts_links_and_versions(client, seeded):
    from django.urls import reverse

    from incidents.models import Incident

    incident = Incident.objects.get(case=seeded)
    assert (incident.reference, incident.when, incident.place.code) == (
        "IN-0001",
        "2012-11-18",
        story.INCIDENT["place"],
    )
    victim = Person.objects.get(pk=incident.acts.first().victim_id)
    assert victim.victim_status == "missing"
    assert incident.acts.count() == 2 and incident.links.count() == 3
    assert incident.versions.count() == 1 + 2 + 3
    client.force_login(get_user_model().objects.get(username="lawyer"))
    url = reverse("incidents:incident_detail", args=[CASE, incident.reference])
    for language, title in (("en", story.INCIDENT["title_en"]), ("ar", story.INCIDENT["title_ar"])):
        client.cookies["django_language"] = language
        page = client.get(url).content.decode()
        assert title in page and victim.code in page
        assert "سليم" not in page  # the victim by pseudonym only
    listed = client.get(reverse("incidents:incident_list", args=[CASE])).content.decode()
    assert incident.reference in listed


def test_a_dump_of_every_table_holds_neither_the_victim_s_detainee_number_nor_branch(seeded):
    """Decision 0023: sealed in the antemortem profile only, nowhere in the clear (not on
    the person, in the audit log, the search index or the task queue)."""
    from search.normalise import normalise
    from tests.dump import dump_all_tables

    dump = dump_all_tables()
    (victim,) = Person.objects.filter(case_roles__role="victim")
    assert victim.code in dump and story.PEOPLE[-1]["victim"]["last_seen_place"] in dump
    for secret in (DETAINEE_NUMBER, BRANCH):
        for form in (secret, normalise(secret), secret.split(" (")[0]):
            assert form not in dump, form
    assert story.MISSING["detainee_number"] == DETAINEE_NUMBER
    assert story.MISSING["detention_branch"] == BRANCH


def test_an_observer_sees_the_victim_s_page_without_his_numbers(client, seeded):
    """The person page shows what stays in the clear; the numbers only come with the
    profile's reveal, to those the reveal rule lets see it, audited."""
    from tests.html import page_text

    (victim,) = Person.objects.filter(case_roles__role="victim")
    person_url = reverse("people:person_detail", args=[CASE, victim.code])
    profile_url = reverse("missing:profile", args=[CASE, victim.code])
    users = get_user_model().objects
    client.force_login(users.get(username="observer"))
    page = page_text(client.get(person_url).content.decode())
    assert victim.code in page and "2012-11-18" in page
    assert "4417" not in page and "Branch 000" not in page
    assert client.post(profile_url).status_code == 403
    client.force_login(users.get(username="lead"))
    before = AuditEntry.objects.filter(action="missing.profile_reveal").count()
    revealed = page_text(client.post(profile_url).content.decode())
    assert DETAINEE_NUMBER in revealed and BRANCH in revealed
    assert AuditEntry.objects.filter(action="missing.profile_reveal").count() == before + 1
