from datetime import date

import pytest
from django.core.exceptions import PermissionDenied, ValidationError

from casefiles.access import INVESTIGATOR_GROUP
from casefiles.models import AuditEntry
from evidence.models import Identification
from missing.models import Antemortem, Candidate, StatusChange
from missing.services import missing as services
from people import crypto
from people.models import Person
from tests.dump import dump_all_tables as _dump_all_tables
from tests.factories import MembershipFactory, UserFactory, register_person

from .conftest import FAMILY_CONTACT, MARKS, identify_first

pytestmark = pytest.mark.django_db


def test_the_database_holds_no_plaintext_antemortem_field_nor_family_contact(cast, missing):
    dump = _dump_all_tables()
    assert missing.victim.code in dump  # the dump is real
    for secret in [FAMILY_CONTACT, "963955000111", "أخوه عمر", MARKS, "Grey jacket", "Chipped"]:
        assert secret not in dump
    assert (
        services.reveal_profile(
            actor=cast.lead, case=cast.case, profile=missing.profile
        ).family_contact
        == FAMILY_CONTACT
    )


def test_a_reveal_is_audited_and_refused_to_those_who_may_not_reveal(cast, missing):
    services.reveal_profile(actor=cast.investigator, case=cast.case, profile=missing.profile)
    assert AuditEntry.objects.filter(action="missing.profile_reveal").count() == 1
    for user in (cast.observer, cast.lawyer, cast.outsider):
        with pytest.raises(PermissionDenied):
            services.reveal_profile(actor=user, case=cast.case, profile=missing.profile)
    assert AuditEntry.objects.filter(action="missing.profile_reveal").count() == 1


def test_a_critical_person_s_profile_opens_only_to_the_lead_and_registrar(cast, missing):
    victim = register_person(
        cast.case, cast.investigator, role="victim", protection_level="critical"
    )
    profile = services.save_profile(
        actor=cast.investigator, case=cast.case, person=victim, values=Antemortem(marks="x")
    )
    services.reveal_profile(actor=cast.lead, case=cast.case, profile=profile)
    other = UserFactory(username="inv2", groups=[INVESTIGATOR_GROUP])
    MembershipFactory(user=other, case=cast.case, role="investigator")
    with pytest.raises(PermissionDenied):
        services.reveal_profile(actor=other, case=cast.case, profile=profile)
    with pytest.raises(PermissionDenied):
        services.save_profile(actor=other, case=cast.case, person=victim, values=Antemortem())


def test_status_changes_are_kept_and_audited(cast, missing):
    audited = AuditEntry.objects.filter(action="people.victim_status")
    assert audited.count() == 1  # the profile opened with the victim missing
    services.change_status(
        actor=cast.lead, case=cast.case, profile=missing.profile, status="detained", reason="seen"
    )
    history = list(StatusChange.objects.filter(profile=missing.profile).values_list("old", "new"))
    assert history == [("", "missing"), ("missing", "detained")]
    assert StatusChange.objects.get(new="detained").reason == "seen"
    assert Person.objects.get(pk=missing.victim.pk).victim_status == "detained"
    assert audited.count() == 2 and audited.last().details["new"] == "detained"
    with pytest.raises(ValueError):
        StatusChange.objects.first().delete()
    with pytest.raises(ValidationError):
        services.change_status(
            actor=cast.lead, case=cast.case, profile=missing.profile, status="gone", reason=""
        )


def test_candidates_filter_by_body_number_and_date(cast, missing):
    found = services.candidates_for(cast.case, number_from=8, number_to=20)
    assert [i.original_filename for i in found] == ["DSC_0012.JPG", "DSC_0020.JPG"]
    found = services.candidates_for(
        cast.case, taken_from=date(2013, 8, 11), taken_to=date(2013, 8, 11)
    )
    assert [i.original_filename for i in found] == ["DSC_0012.JPG"]


def test_only_the_lead_prepares_and_runs_a_session(cast, missing):
    for user in (cast.investigator, cast.observer, cast.lawyer, cast.outsider):
        with pytest.raises(PermissionDenied):
            services.prepare_session(
                actor=user, case=cast.case, profile=missing.profile, family_member=missing.mother
            )
    session = services.prepare_session(
        actor=cast.lead, case=cast.case, profile=missing.profile, family_member=missing.mother
    )
    candidate = session.candidates.first()
    with pytest.raises(PermissionDenied):
        services.show_candidate(actor=cast.investigator, case=cast.case, candidate=candidate)


def test_a_session_shows_audits_each_photo_and_the_status_follows(cast, missing):
    session = services.prepare_session(
        actor=cast.lead,
        case=cast.case,
        profile=missing.profile,
        family_member=missing.mother,
        number_from=7,
        number_to=12,
    )
    first, second = session.candidates.all()
    with pytest.raises(ValidationError):  # not looked at yet
        services.identify(
            actor=cast.lead,
            case=cast.case,
            candidate=first,
            confidence="certain",
            consent=True,
            present="Lead, mother",
            status="identified",
        )
    services.show_candidate(actor=cast.lead, case=cast.case, candidate=first)
    services.show_candidate(actor=cast.lead, case=cast.case, candidate=second)
    shown = AuditEntry.objects.filter(action="missing.photo_shown")
    assert sorted(e.target_id for e in shown) == sorted(str(c.item_id) for c in (first, second))
    with pytest.raises(ValidationError):  # no consent
        services.identify(
            actor=cast.lead,
            case=cast.case,
            candidate=second,
            confidence="certain",
            consent=False,
            present="Lead, mother",
            status="identified",
        )
    identification = services.identify(
        actor=cast.lead,
        case=cast.case,
        candidate=second,
        confidence="probable",
        consent=True,
        present="Lead, mother, a psychologist",
        status="identified",
    )
    assert identification.witness == missing.mother and identification.identified == missing.victim
    assert identification.item == missing.items[12]
    assert Identification.objects.filter(item=missing.items[12]).count() == 1
    assert Person.objects.get(pk=missing.victim.pk).victim_status == "identified"
    assert AuditEntry.objects.filter(action="missing.identified").count() == 1
    assert AuditEntry.objects.filter(action="people.victim_status").last().details["new"] == (
        "identified"
    )
    assert list(missing.profile.history.values_list("old", "new")) == [
        ("", "missing"),
        ("missing", "identified"),
    ]


def test_a_family_member_of_another_case_is_refused(cast, missing, case):
    with pytest.raises(ValidationError):
        services.prepare_session(
            actor=cast.lead, case=cast.case, profile=missing.profile, family_member=missing.victim
        )


def test_save_profile_audits_fields_never_values(cast, missing):
    services.save_profile(
        actor=cast.investigator,
        case=cast.case,
        person=missing.victim,
        values=Antemortem(family_contact="changed"),
    )
    entry = AuditEntry.objects.filter(action="missing.profile_save").last()
    assert "family_contact" in str(entry.details) and "changed" not in str(
        {k: v for k, v in entry.details.items() if k != "fields"}
    )


def test_who_was_present_is_stored_sealed(cast, missing):
    session, candidate = identify_first(cast, missing, present="الأم وأخوها زياد")
    stored = Candidate.objects.get(pk=candidate.pk)
    assert stored.enc_present.startswith("athar1:")
    assert stored.open_present() == "الأم وأخوها زياد"
    dump = _dump_all_tables()
    assert "زياد" not in dump
    # bound to its row: copied onto another candidate, it does not open
    other = session.candidates.exclude(pk=candidate.pk).first()
    Candidate.objects.filter(pk=other.pk).update(enc_present=stored.enc_present)
    with pytest.raises(crypto.DecryptionError):
        Candidate.objects.get(pk=other.pk).open_present()


def test_more_matches_than_a_session_holds_is_refused_with_the_count(cast, missing, monkeypatch):
    """Never a silent cut: the lead is told to narrow the filters."""
    monkeypatch.setattr(services, "MAX_CANDIDATES", 2)
    with pytest.raises(ValidationError, match="More than 2 photos"):
        services.prepare_session(
            actor=cast.lead, case=cast.case, profile=missing.profile, family_member=missing.mother
        )
    assert not missing.profile.sessions.exists()
    session = services.prepare_session(
        actor=cast.lead,
        case=cast.case,
        profile=missing.profile,
        family_member=missing.mother,
        number_from=10,
    )
    assert (session.matched, session.left_out, session.candidates.count()) == (2, 1, 2)
    entry = AuditEntry.objects.get(action="missing.session_prepare")
    assert entry.details["left_out"] == 1 and len(entry.details["candidates"]) == 2
