"""Every data migration (``RunPython``) is tested: a new, empty database is migrated to the
state just before it, rows are written there with that state's models, the migration is
applied, and what it did is checked (then, where it has one, its reverse).

Each scenario runs in a child process on its own scratch database of the vendor this
run is on (SQLite or PostgreSQL), so it runs on both databases and never touches the test
database. ``test_every_data_migration_has_a_scenario`` fails when a new data migration
comes without one.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from datetime import UTC, date, datetime
from importlib import import_module

import pytest

from tests.scratch_db import ROOT, scratch_database

APPS = (
    "casefiles",
    "vocabularies",
    "accounts",
    "evidence",
    "people",
    "legal",
    "search",
    "places",
    "disclosure",
    "incidents",
    "missing",
    "demo",
)
CASEFILES_BEFORE_BINDINGS = ("casefiles", "0006_second_factor_resets")
AT = datetime(2014, 8, 20, 10, 0, tzinfo=UTC)


# -- in the child process ----------------------------------------------------------------


def _migrate(*targets: tuple[str, str]):
    """Migrate the database to these nodes (forwards or backwards); that state's apps."""
    from django.db import connection
    from django.db.migrations.executor import MigrationExecutor

    executor = MigrationExecutor(connection)
    executor.migrate(list(targets))
    executor.loader.build_graph()
    return executor.loader.project_state(list(targets)).apps


def _migrate_fully() -> None:
    from django.db import connection
    from django.db.migrations.executor import MigrationExecutor

    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())


def _verify_audit() -> str:
    """``verify_audit`` on the fully migrated database: the chain and every bound row."""
    from io import StringIO

    from django.core.management import call_command

    _migrate_fully()
    out = StringIO()
    call_command("verify_audit", stdout=out)
    return out.getvalue()


def _refused(write) -> bool:
    """Whether the database refuses this write (a trigger raising)."""
    from django.db import DatabaseError, transaction

    try:
        with transaction.atomic():
            write()
    except DatabaseError:
        return True
    return False


def _case_and_user(apps):
    user = apps.get_model("auth", "User").objects.create(username="nour")
    case = apps.get_model("casefiles", "Case").objects.create(
        reference="SYR-2014-001", title="Detention photographs", created_by=user
    )
    return case, user


def _person(apps, case, user, code="W-1"):
    return apps.get_model("people", "Person").objects.create(
        code=code,
        case=case,
        created_by=user,
        **dict.fromkeys(
            ("enc_name_ar", "enc_name_latin", "enc_aliases", "enc_birth_date", "enc_phone"),
            "ciphertext",
        ),
        enc_address="ciphertext",
        enc_risk_notes="ciphertext",
    )


def _testimony(apps, case, user, witness, status):
    return apps.get_model("people", "Testimony").objects.create(
        case=case,
        witness=witness,
        taken_at=AT,
        language="ar",
        mode="in_person",
        status=status,
        created_by=user,
    )


def _a_prior_entry(apps) -> None:
    """One audit entry written before the migration: its binding continues the chain."""
    from django.db import connection

    from casefiles import bindings

    bindings._append(apps.get_model("casefiles", "AuditEntry"), connection, "case.create", {})


def _bindings_of(apps):
    """The ``audit.bind_existing`` entries, in order, with what each binds."""
    entries = apps.get_model("casefiles", "AuditEntry").objects.order_by("seq")
    return [
        (e.seq, e.actor_id, e.details["bound"])
        for e in entries.filter(action="audit.bind_existing")
    ]


def system_groups() -> None:
    """casefiles 0003: the groups Investigator, Lawyer and Admin, and Admin's permissions;
    a group of that name already there is kept, not doubled; other groups are left."""
    groups_migration = import_module("casefiles.migrations.0003_system_groups")

    before = [
        ("casefiles", "0002_auditentry_append_only"),
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]
    apps = _migrate(*before)
    group = apps.get_model("auth", "Group")
    lawyers = group.objects.create(name="Lawyer")
    group.objects.create(name="Volunteers")

    apps = _migrate(("casefiles", "0003_system_groups"))
    group = apps.get_model("auth", "Group")
    assert sorted(group.objects.values_list("name", flat=True)) == [
        "Admin",
        "Investigator",
        "Lawyer",
        "Volunteers",
    ]
    assert group.objects.get(name="Lawyer").pk == lawyers.pk
    admin = group.objects.get(name="Admin")
    granted = set(admin.permissions.values_list("content_type__app_label", "codename"))
    assert granted == set(groups_migration.ADMIN_PERMISSIONS), granted
    assert not group.objects.get(name="Investigator").permissions.exists()

    apps = _migrate(*before)
    group = apps.get_model("auth", "Group")
    assert list(group.objects.values_list("name", flat=True)) == ["Volunteers"]


def custody_bound() -> None:
    """evidence 0008: custody events written before binding are bound into the chain by
    one system entry after the last one, with each row's content hash."""
    from casefiles import bindings

    apps = _migrate(("evidence", "0007_item_origin_immutable"), CASEFILES_BEFORE_BINDINGS)
    _a_prior_entry(apps)
    case, user = _case_and_user(apps)
    events = [
        apps.get_model("evidence", "CustodyEvent").objects.create(
            case=case, action="received", at=AT, actor=user, to_custodian=f"custodian {n}"
        )
        for n in range(3)
    ]

    apps = _migrate(("evidence", "0008_bind_custody_to_audit_chain"))
    custody = apps.get_model("evidence", "CustodyEvent")
    [(seq, actor, bound)] = _bindings_of(apps)
    assert (seq, actor) == (2, None)
    assert list(bound) == ["evidence_custodyevent"]
    assert bound["evidence_custodyevent"]["columns"] == bindings.columns_of(custody)
    rows = bound["evidence_custodyevent"]["rows"]
    assert sorted(rows) == sorted(str(e.pk) for e in events)
    assert rows == bindings.hashes_of(custody, [e.pk for e in events])

    verified = _verify_audit()
    assert "bound rows OK" in verified and "evidence_custodyevent 3" in verified, verified


def approved_testimony_locked() -> None:
    """people 0003: an approved testimony's row cannot change or go and takes no new
    version; a draft still can; the reverse lifts the lock."""
    from django.db.models import F

    before = ("people", "0002_append_only_history")
    apps = _migrate(before)
    case, user = _case_and_user(apps)
    witness = _person(apps, case, user)
    approved = _testimony(apps, case, user, witness, "approved")
    draft = _testimony(apps, case, user, witness, "draft")

    apps = _migrate(("people", "0003_approved_testimony_locked"))
    testimony = apps.get_model("people", "Testimony").objects
    version = apps.get_model("people", "TestimonyVersion").objects

    def add_version(to):
        return lambda: version.create(
            testimony_id=to.pk,
            number=1,
            text="...",
            reason="first",
            sha256="0" * 64,
            author_id=user.pk,
        )

    assert _refused(lambda: testimony.filter(pk=approved.pk).update(place="Damascus"))
    assert _refused(lambda: testimony.filter(pk=approved.pk).delete())
    assert _refused(add_version(approved))
    assert not _refused(add_version(draft))
    assert not _refused(lambda: testimony.filter(pk=draft.pk).update(place="Damascus"))
    assert testimony.get(pk=approved.pk).place == ""

    apps = _migrate(before)
    testimony = apps.get_model("people", "Testimony").objects
    assert not _refused(lambda: testimony.filter(pk=approved.pk).update(remote=~F("remote")))


def history_bound() -> None:
    """people 0005: testimony versions, review decisions and consent records written
    before binding are bound into the chain, one system entry per table after the last."""
    from casefiles import bindings

    apps = _migrate(("people", "0004_protection_changes"), CASEFILES_BEFORE_BINDINGS)
    _a_prior_entry(apps)
    case, user = _case_and_user(apps)
    witness = _person(apps, case, user)
    draft = _testimony(apps, case, user, witness, "draft")
    model = apps.get_model
    versions = [
        model("people", "TestimonyVersion").objects.create(
            testimony=draft, number=n, text=f"v{n}", reason="r", sha256="0" * 64, author=user
        )
        for n in (1, 2)
    ]
    decision = model("people", "ReviewDecision").objects.create(
        testimony=draft, from_status="draft", to_status="submitted", actor=user
    )
    consent = model("people", "Consent").objects.create(
        person=witness,
        case=case,
        scopes=["investigation"],
        how="written",
        given_on=date(2014, 8, 20),
        recorded_by=user,
    )

    apps = _migrate(("people", "0005_bind_history_to_audit_chain"))
    found = _bindings_of(apps)
    assert [(seq, actor, list(bound)) for seq, actor, bound in found] == [
        (2, None, ["people_testimonyversion"]),
        (3, None, ["people_reviewdecision"]),
        (4, None, ["people_consent"]),
    ]
    for (_, _, bound), (name, rows) in zip(
        found,
        [("TestimonyVersion", versions), ("ReviewDecision", [decision]), ("Consent", [consent])],
        strict=True,
    ):
        historical = apps.get_model("people", name)
        (table,) = bound.values()
        assert table["columns"] == bindings.columns_of(historical)
        assert table["rows"] == bindings.hashes_of(historical, [r.pk for r in rows])
        assert sorted(table["rows"]) == sorted(str(r.pk) for r in rows)

    verified = _verify_audit()
    assert "bound rows OK" in verified and "people_testimonyversion 2" in verified, verified


def approved_testimony_reopens() -> None:
    """legal 0002: an approved testimony's row may go back to "submitted" only when the
    latest decision on it records that step; nothing else about it changes, it takes no
    version while approved; the reverse puts back the whole lock."""
    before = ("legal", "0001_initial")
    apps = _migrate(before)
    case, user = _case_and_user(apps)
    witness = _person(apps, case, user)
    approved = _testimony(apps, case, user, witness, "approved")
    other = _testimony(apps, case, user, witness, "approved")

    apps = _migrate(("legal", "0002_reopen_approved_testimony"))
    testimony = apps.get_model("people", "Testimony").objects
    decision = apps.get_model("legal", "ReviewDecision").objects

    def reopen(which):
        return lambda: testimony.filter(pk=which.pk).update(status="submitted")

    assert _refused(reopen(approved))  # no decision recorded
    decision.create(
        testimony_id=approved.pk, from_status="approved", to_status="submitted", actor_id=user.pk
    )
    assert _refused(lambda: testimony.filter(pk=approved.pk).update(place="Damascus"))
    assert _refused(lambda: testimony.filter(pk=approved.pk).update(status="returned"))
    assert _refused(lambda: testimony.filter(pk=approved.pk).delete())
    assert _refused(reopen(other))  # the decision is another testimony's
    assert not _refused(reopen(approved))
    assert testimony.get(pk=approved.pk).status == "submitted"

    apps = _migrate(before)
    decision = apps.get_model("legal", "ReviewDecision").objects
    decision.create(
        testimony_id=other.pk, from_status="approved", to_status="submitted", actor_id=user.pk
    )
    testimony = apps.get_model("people", "Testimony").objects
    assert _refused(lambda: testimony.filter(pk=other.pk).update(status="submitted"))


def catalogue_loaded() -> None:
    """legal 0004: version 1 of the catalogue: the five crimes against humanity with
    article 7's context, article 8's wilful killing and torture, and VStGB § 7, each with
    its elements in English and Arabic; the reverse keeps any element a link names."""
    import re

    apps = _migrate(("legal", "0004_catalogue_v1"))
    crime = apps.get_model("legal", "Crime").objects
    element = apps.get_model("legal", "LegalElement").objects
    codes = set(crime.values_list("code", flat=True))
    assert {"RS-7-CTX", "RS-7-1-a", "RS-7-1-e", "RS-7-1-f", "RS-7-1-i", "RS-7-1-k"} <= codes
    assert {"RS-8-2-a-i", "RS-8-2-a-ii-1", "VStGB-7-CTX", "VStGB-7-1-1"} <= codes
    assert set(crime.values_list("jurisdiction", flat=True)) == {"ICC", "DE"}
    assert element.get(code="RS-7-1-a.1").label_en == "The perpetrator killed one or more persons."
    assert element.filter(crime__code="RS-7-1-f").count() == 3
    assert all(re.search("[\u0600-\u06ff]", e.label_ar) for e in element.all())
    assert all(e.since == "1" and e.retired_at is None for e in element.all())
    case, user = _case_and_user(apps)
    witness = _person(apps, case, user)
    statement = _testimony(apps, case, user, witness, "draft")
    apps.get_model("legal", "ElementLink").objects.create(
        case=case,
        element=element.get(code="RS-7-1-f.1"),
        testimony=statement,
        stance="supports",
        proposition="He describes the beatings at branch 215.",
        author=user,
    )

    apps = _migrate(("legal", "0003_elements_links_assessments"))
    element = apps.get_model("legal", "LegalElement").objects
    assert list(element.values_list("code", flat=True)) == ["RS-7-1-f.1"]


def admins_keep_the_catalogue() -> None:
    """legal 0005: the Admin group may see crimes and elements and add elements (not
    change or delete them); the reverse takes those rights back."""
    apps = _migrate(("legal", "0005_admins_keep_the_catalogue"))
    admin = apps.get_model("auth", "Group").objects.get(name="Admin")
    legal = set(
        admin.permissions.filter(content_type__app_label="legal").values_list("codename", flat=True)
    )
    assert legal == {"view_crime", "view_legalelement", "add_legalelement"}
    apps = _migrate(("legal", "0004_catalogue_v1"))
    admin = apps.get_model("auth", "Group").objects.get(name="Admin")
    assert not admin.permissions.filter(content_type__app_label="legal").exists()


def normaliser_function() -> None:
    """search 0001: ``athar_normalise`` is in the database and normalises as the Python
    does (on SQLite the Python function is registered on each connection, so it is there
    before and after); the reverse drops it from PostgreSQL."""
    from django.db import connection
    from django.db.migrations.executor import MigrationExecutor

    from search.normalise import normalise

    def unapplied():
        MigrationExecutor(connection).migrate([("search", None)])

    def present() -> bool:
        if connection.vendor != "postgresql":
            return True
        with connection.cursor() as cursor:
            cursor.execute("SELECT count(*) FROM pg_proc WHERE proname = 'athar_normalise'")
            return cursor.fetchone()[0] == 1

    def normalised(text):
        with connection.cursor() as cursor:
            cursor.execute("SELECT athar_normalise(%s)", [text])
            return cursor.fetchone()[0]

    unapplied()
    assert present() == (connection.vendor == "sqlite")

    _migrate(("search", "0001_athar_normalise"))
    assert present()
    for text in ["أَحْمَد", "فاطمة", "Abd al-RAḤMĀN ٢٠١٤", "ﻻ\u200c  ی"]:
        assert normalised(text) == normalise(text)

    unapplied()
    assert present() == (connection.vendor == "sqlite")


def thesauri_loaded() -> None:
    """vocabularies 0002: version 1 of the vocabularies: seven HURIDOCS micro-thesauri and
    the Syrian Archive's violation categories, each term in English and Arabic under its
    broader term; the reverse keeps any term something still refers to."""
    import re

    apps = _migrate(("vocabularies", "0002_thesauri_v1"))
    term = apps.get_model("vocabularies", "Term").objects
    counts = {s: term.filter(scheme=s).count() for s in term.values_list("scheme", flat=True)}
    assert counts == {
        "violation_type": 47,
        "act_type": 532,
        "method": 103,
        "detention_type": 9,
        "perpetrator_type": 40,
        "involvement": 23,
        "source_type": 25,
        "sa_violation": 14,
    }, counts
    arabic = term.exclude(scheme="act_type")
    assert all(re.search("[\u0600-\u06ff]", t.label_ar) for t in arabic)
    assert not term.filter(scheme="act_type").exclude(label_ar="").exists()
    assert all(t.since == "1" and t.retired_at is None for t in term.all())
    intelligence = term.get(scheme="perpetrator_type", code="010106000000")
    assert intelligence.label_en == "Intelligence agency; secret service"
    assert intelligence.parent.code == "010100000000" and intelligence.depth == 2
    assert term.get(scheme="involvement", code="010200000000").label_en == (
        "Gave orders that led to the act"
    )
    kept = term.create(
        scheme="perpetrator_type",
        code="local-1",
        label_en="Air Force Intelligence",
        label_ar="المخابرات الجوية",
        parent=intelligence,
        depth=3,
        since="local",
    )

    apps = _migrate(("vocabularies", "0001_terms"))
    term = apps.get_model("vocabularies", "Term").objects
    assert sorted(term.values_list("code", flat=True)) == [
        "010000000000",
        "010100000000",
        "010106000000",
        "local-1",
    ]
    assert term.get(code="local-1").pk == kept.pk


def admins_keep_the_vocabularies() -> None:
    """vocabularies 0003: the Admin group may see, add and change terms (not delete
    them); the reverse takes those rights back."""
    apps = _migrate(("vocabularies", "0003_admins_keep_the_vocabularies"))
    admin = apps.get_model("auth", "Group").objects.get(name="Admin")
    granted = set(
        admin.permissions.filter(content_type__app_label="vocabularies").values_list(
            "codename", flat=True
        )
    )
    assert granted == {"view_term", "add_term", "change_term"}
    apps = _migrate(
        ("vocabularies", "0002_thesauri_v1"), ("auth", "0012_alter_user_first_name_max_length")
    )
    admin = apps.get_model("auth", "Group").objects.get(name="Admin")
    assert not admin.permissions.filter(content_type__app_label="vocabularies").exists()


def syria_gazetteer() -> None:
    """places 0002: Syria, its 14 governorates with their ISO codes and GeoNames names,
    and the facilities of the Caesar reporting, each in English and Arabic and searchable
    in the normalised form; the reverse keeps any place something sits within."""
    from search.normalise import normalise

    apps = _migrate(("places", "0002_syria"))
    place = apps.get_model("places", "Place").objects
    assert place.filter(kind="governorate", parent__code="SY").count() == 14
    assert place.get(code="SY-DI").geonames_admin1 == "Dimashq"
    saydnaya = place.get(code="SY-FAC-SAYDNAYA")
    assert (saydnaya.kind, saydnaya.facility_type, saydnaya.parent.code) == (
        "facility",
        "prison",
        "SY-RD",
    )
    assert f"|{normalise('صيدنايا')}|" in saydnaya.search_text
    assert "|sednaya prison|" in saydnaya.search_text
    assert place.get(code="SY-FAC-BRANCH-251").latitude is None
    kept = place.create(
        code="SY-RD-DOUMA",
        kind="town",
        parent=place.get(code="SY-RD"),
        name_en="Douma",
        name_ar="دوما",
    )

    apps = _migrate(("places", "0001_gazetteer"))
    place = apps.get_model("places", "Place").objects
    assert sorted(place.values_list("code", flat=True)) == ["SY", "SY-RD", "SY-RD-DOUMA"]
    assert place.get(code="SY-RD-DOUMA").pk == kept.pk


def present_sealed() -> None:
    """missing 0003: who was present at an identification, stored in plain text before,
    is sealed (``people.crypto``, bound to its row and column); a candidate with nothing
    recorded keeps nothing; the reverse opens the values again."""
    from people import crypto

    apps = _migrate(("missing", "0002_statuschange_append_only"))
    case, user = _case_and_user(apps)
    victim, mother = _person(apps, case, user, "V-1"), _person(apps, case, user, "W-1")
    profile = apps.get_model("missing", "Profile").objects.create(
        case=case,
        person=victim,
        created_by=user,
        **{f"enc_{n}": "ciphertext" for n in ("physical", "clothing", "marks", "dental")},
        **{f"enc_{n}": "ciphertext" for n in ("last_seen_text", "detainee_number")},
        enc_family_contact="ciphertext",
    )
    session = apps.get_model("missing", "Session").objects.create(
        case=case, profile=profile, family_member=mother, prepared_by=user
    )
    candidate = apps.get_model("missing", "Candidate").objects
    for n, present in enumerate(["الأم وأخوها زياد", ""], 1):
        stored = apps.get_model("evidence", "StoredFile").objects.create(
            sha256=f"{n:064d}", size=1, media_type="image/jpeg", storage_key=f"sha256/{n}"
        )
        item = apps.get_model("evidence", "EvidenceItem").objects.create(
            case=case,
            reference=f"EV-{n:06d}",
            kind="photo",
            original_filename=f"DSC_{n:04d}.JPG",
            original_path=f"DSC_{n:04d}.JPG",
            original=stored,
        )
        candidate.create(session=session, item=item, order=n, present=present)
    seen, blank = candidate.order_by("order")

    apps = _migrate(("missing", "0003_seal_who_was_present"))
    candidate = apps.get_model("missing", "Candidate").objects
    sealed = candidate.get(pk=seen.pk).enc_present
    assert sealed.startswith("athar1:") and "زياد" not in sealed
    aad = crypto.associated_data("missing_candidate", seen.pk, "enc_present")
    assert crypto.decrypt(sealed, aad) == "الأم وأخوها زياد"
    assert candidate.get(pk=blank.pk).enc_present == ""

    apps = _migrate(("missing", "0002_statuschange_append_only"))
    candidate = apps.get_model("missing", "Candidate").objects
    assert candidate.get(pk=seen.pk).present == "الأم وأخوها زياد"
    assert candidate.get(pk=blank.pk).present == ""


def one_victim_status() -> None:
    """missing 0004: a victim gets one status, the person's. Each antemortem profile's
    status is copied onto its person (the profile's wins where the person's page said
    otherwise), the profile's history stays whole, a victim without a profile keeps
    theirs; the reverse puts the person's status back on each profile."""
    apps = _migrate(("missing", "0003_seal_who_was_present"))
    case, user = _case_and_user(apps)
    profiles = apps.get_model("missing", "Profile").objects
    history = apps.get_model("missing", "StatusChange").objects
    person = apps.get_model("people", "Person").objects

    def victim(code, status, profile_status=None):
        someone = _person(apps, case, user, code)
        person.filter(pk=someone.pk).update(victim_status=status)
        if profile_status is not None:
            profile = profiles.create(
                case=case,
                person=someone,
                created_by=user,
                status=profile_status,
                **{f"enc_{n}": "ciphertext" for n in ("physical", "clothing", "marks")},
                **{f"enc_{n}": "ciphertext" for n in ("dental", "last_seen_text")},
                enc_detainee_number="ciphertext",
                enc_family_contact="ciphertext",
            )
            history.create(profile=profile, old="", new="missing", changed_by=user)
            if profile_status != "missing":
                history.create(profile=profile, old="missing", new=profile_status, changed_by=user)
        return someone.pk

    identified = victim("V-1", "missing", "identified")
    unset = victim("V-2", "", "detained")
    agreeing = victim("V-3", "deceased", "deceased")
    no_profile = victim("V-4", "released")

    apps = _migrate(("missing", "0004_one_victim_status"))
    person = apps.get_model("people", "Person").objects
    assert dict(person.values_list("pk", "victim_status")) == {
        identified: "identified",
        unset: "detained",
        agreeing: "deceased",
        no_profile: "released",
    }
    history = apps.get_model("missing", "StatusChange").objects
    assert list(
        history.filter(profile__person_id=identified).order_by("pk").values_list("old", "new")
    ) == [("", "missing"), ("missing", "identified")]
    assert history.count() == 6

    person.filter(pk=unset).update(victim_status="")  # emptied since: missing, as before
    apps = _migrate(("missing", "0003_seal_who_was_present"))
    profiles = apps.get_model("missing", "Profile").objects
    assert dict(profiles.values_list("person_id", "status")) == {
        identified: "identified",
        unset: "missing",
        agreeing: "deceased",
    }


def status_changes_bound() -> None:
    """missing 0005: the status changes written before they were bound are bound into the
    chain by one system entry after the last, and the whole chain then verifies."""
    from casefiles import bindings

    apps = _migrate(("missing", "0004_one_victim_status"))
    _a_prior_entry(apps)
    case, user = _case_and_user(apps)
    profile = apps.get_model("missing", "Profile").objects.create(
        case=case,
        person=_person(apps, case, user, "V-1"),
        created_by=user,
        **{f"enc_{n}": "ciphertext" for n in ("physical", "clothing", "marks")},
        **{f"enc_{n}": "ciphertext" for n in ("dental", "last_seen_text")},
        enc_detainee_number="ciphertext",
        enc_family_contact="ciphertext",
    )
    history = apps.get_model("missing", "StatusChange").objects
    rows = [
        history.create(profile=profile, old="", new="missing", changed_by=user),
        history.create(profile=profile, old="missing", new="detained", changed_by=user),
    ]

    apps = _migrate(("missing", "0005_bind_status_changes"))
    [(seq, actor, bound)] = _bindings_of(apps)
    assert (seq, actor, list(bound)) == (2, None, ["missing_statuschange"])
    historical = apps.get_model("missing", "StatusChange")
    assert bound["missing_statuschange"]["rows"] == bindings.hashes_of(
        historical, [r.pk for r in rows]
    )
    verified = _verify_audit()
    assert "bound rows OK" in verified and "missing_statuschange 2" in verified, verified


def victim_identifiers_sealed() -> None:
    """missing 0007: a victim's detainee number and detention branch leave the person for
    the profile, sealed (a profile made where there was none; two different numbers both
    kept, the profile's first); no copy is left in any table; every person's victim
    details and every profile are then bound, and the chain verifies; the reverse puts
    the values back on the person."""
    from people import crypto

    apps = _migrate(("missing", "0005_bind_status_changes"))
    _a_prior_entry(apps)
    case, user = _case_and_user(apps)
    person = apps.get_model("people", "Person").objects
    profiles = apps.get_model("missing", "Profile").objects

    def aad(pk, name):
        return crypto.associated_data("missing_profile", pk, f"enc_{name}")

    def victim(code, number="", branch="", profile_number=None):
        someone = _person(apps, case, user, code)
        person.filter(pk=someone.pk).update(
            victim_status="missing", detainee_number=number, detention_branch=branch
        )
        if profile_number is not None:
            profile = profiles.create(
                case=case,
                person=someone,
                created_by=user,
                **{f"enc_{n}": "ciphertext" for n in ("physical", "clothing", "marks")},
                **{f"enc_{n}": "ciphertext" for n in ("dental", "last_seen_text")},
                enc_family_contact="ciphertext",
            )
            profile.enc_detainee_number = crypto.encrypt(
                profile_number, aad(profile.pk, "detainee_number")
            )
            profile.save()
        return someone.pk

    agreeing = victim("V-1", "4417/215", "Branch 7Q (Palestine)", profile_number="4417/215")
    differing = victim("V-2", "B-7731", "", profile_number="A-1290")
    no_profile = victim("V-3", "8812/9", "Air Force Intelligence, cell block Q7")
    nothing = victim("V-4", profile_number="")
    witness = _person(apps, case, user, "W-1").pk

    apps = _migrate(("missing", "0007_victim_identifiers_sealed"))
    person = apps.get_model("people", "Person").objects
    assert set(person.values_list("detainee_number", "detention_branch")) == {("", "")}
    profiles = apps.get_model("missing", "Profile").objects

    def opened(pk):
        profile = profiles.get(person_id=pk)
        return tuple(
            crypto.decrypt(getattr(profile, f"enc_{n}"), aad(profile.pk, n))
            for n in ("detainee_number", "detention_branch")
        )

    assert opened(agreeing) == ("4417/215", "Branch 7Q (Palestine)")
    assert opened(differing) == ("A-1290; B-7731", "")
    assert opened(no_profile) == ("8812/9", "Air Force Intelligence, cell block Q7")
    made = profiles.get(person_id=no_profile)
    assert (made.case_id, made.created_by_id) == (case.pk, user.pk)
    assert crypto.decrypt(made.enc_family_contact, aad(made.pk, "family_contact")) == ""
    assert opened(nothing) == ("", "")
    assert not profiles.filter(person_id=witness).exists()

    verified = _verify_audit()  # to the last migration: the columns are gone
    assert "bound rows OK" in verified, verified
    assert "people_person 5" in verified and "missing_profile 4" in verified, verified
    from tests.dump import dump_all_tables

    dump = dump_all_tables()
    for secret in ("4417/215", "Branch 7Q", "B-7731", "A-1290", "8812/9", "cell block Q7"):
        assert secret not in dump, [line for line in dump.splitlines() if secret in line]

    apps = _migrate(("missing", "0005_bind_status_changes"))
    person = apps.get_model("people", "Person").objects
    assert dict(
        (pk, (n, b)) for pk, n, b in person.values_list("pk", "detainee_number", "detention_branch")
    ) == {
        agreeing: ("4417/215", "Branch 7Q (Palestine)"),
        differing: ("A-1290; B-7731", ""),
        no_profile: ("8812/9", "Air Force Intelligence, cell block Q7"),
        nothing: ("", ""),
        witness: ("", ""),
    }


def people_index_rewritten() -> None:
    """search 0003: a person's index entry, which held their detainee number and branch,
    is written again from what stays in the clear: the place last seen, the code."""
    from search.normalise import normalise

    apps = _migrate(("search", "0002_index"), ("people", "0010_victim_identifiers_sealed"))
    case, user = _case_and_user(apps)
    victim = _person(apps, case, user, "V-1")
    apps.get_model("people", "Person").objects.filter(pk=victim.pk).update(
        last_seen_place="Airport road checkpoint"
    )
    entries = apps.get_model("search", "Entry").objects
    entries.create(
        case=case,
        kind="person",
        key=str(victim.pk),
        reference="V-1",
        title="V-1 · Victim",
        body="Airport road checkpoint\nBranch 215",
        words="v 1 victim airport road checkpoint branch 215 4417",
        short=normalise("V-1 | 4417 | Branch 215"),
    )
    orphan = entries.create(
        case=case, kind="person", key="0" * 32, reference="V-9", body="Branch 9", short="9"
    )

    apps = _migrate(("search", "0003_people_without_identifiers"))
    entries = apps.get_model("search", "Entry").objects
    entry = entries.get(key=str(victim.pk))
    assert entry.body == "Airport road checkpoint"
    assert entry.short == normalise("V-1")
    assert "4417" not in entry.words and "215" not in entry.words and "airport" in entry.words
    assert entries.get(pk=orphan.pk).body == ""


def town_keys() -> None:
    """places 0004: a town recorded before it gets the keys of its names (GeoNames'
    spelling among them), by which the photos near it are found; other places none."""
    apps = _migrate(("places", "0003_item_locations"))
    place = apps.get_model("places", "Place").objects
    douma = place.create(
        code="SY-RD-DOUMA",
        kind="town",
        parent=place.get(code="SY-RD"),
        name_en="Douma",
        name_ar="دوما",
        alt_names=["Dūmā", "Al-Douma"],
    )

    apps = _migrate(("places", "0004_town_keys"))
    keys = apps.get_model("places", "PlaceKey").objects
    assert set(keys.filter(place_id=douma.pk).values_list("key", flat=True)) == {
        "douma",
        "duma",
        "aldouma",
        "دوما",
    }
    assert not keys.exclude(place_id=douma.pk).exists()


def signing_keys_listed() -> None:
    """casefiles 0012: the keys of checkpoints signed before keys were listed are listed,
    each with its first and last use; each but the newest retired when the next began."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from casefiles.checkpoints import fingerprint, public_pem

    apps = _migrate(("casefiles", "0011_submission"))
    checkpoint = apps.get_model("casefiles", "AuditCheckpoint")
    old, new = Ed25519PrivateKey.generate(), Ed25519PrivateKey.generate()
    for size, key in ((1, old), (2, old), (3, new)):
        checkpoint.objects.create(
            size=size,
            root="0" * 64,
            origin="o",
            signed_text="t",
            signature="s",
            public_key=public_pem(key.public_key()),
        )
    apps = _migrate(("casefiles", "0012_signing_keys_cosignatures"))
    keys = apps.get_model("casefiles", "SigningKey").objects.order_by("first_used_at", "pk")
    listed = [(k.fingerprint, k.retired_at is None) for k in keys]
    assert listed == [
        (fingerprint(old.public_key()), False),
        (fingerprint(new.public_key()), True),
    ]


# (app, migration) -> the scenario that tests it
SCENARIOS = {
    ("casefiles", "0012_signing_keys_cosignatures"): signing_keys_listed,
    ("casefiles", "0003_system_groups"): system_groups,
    ("evidence", "0008_bind_custody_to_audit_chain"): custody_bound,
    ("people", "0003_approved_testimony_locked"): approved_testimony_locked,
    ("people", "0005_bind_history_to_audit_chain"): history_bound,
    ("legal", "0002_reopen_approved_testimony"): approved_testimony_reopens,
    ("missing", "0003_seal_who_was_present"): present_sealed,
    ("missing", "0004_one_victim_status"): one_victim_status,
    ("missing", "0005_bind_status_changes"): status_changes_bound,
    ("missing", "0007_victim_identifiers_sealed"): victim_identifiers_sealed,
    ("search", "0003_people_without_identifiers"): people_index_rewritten,
    ("legal", "0004_catalogue_v1"): catalogue_loaded,
    ("legal", "0005_admins_keep_the_catalogue"): admins_keep_the_catalogue,
    ("search", "0001_athar_normalise"): normaliser_function,
    ("places", "0002_syria"): syria_gazetteer,
    ("places", "0004_town_keys"): town_keys,
    ("vocabularies", "0002_thesauri_v1"): thesauri_loaded,
    ("vocabularies", "0003_admins_keep_the_vocabularies"): admins_keep_the_vocabularies,
}


def run(app: str, name: str) -> None:
    SCENARIOS[app, name]()
    print("scenario passed")


# -- in the test process -------------------------------------------------------------------


def _data_migrations() -> set[tuple[str, str]]:
    found = set()
    for app in APPS:
        for path in sorted((ROOT / app / "migrations").glob("[0-9]*.py")):
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.Attribute) and node.attr == "RunPython":
                    found.add((app, path.stem))
    return found


def test_every_data_migration_has_a_scenario():
    assert _data_migrations() == set(SCENARIOS)


@pytest.mark.parametrize(
    ("app", "name"), sorted(SCENARIOS), ids=[f"{a}/{n}" for a, n in sorted(SCENARIOS)]
)
def test_a_data_migration_does_what_it_says(tmp_path, app, name):
    with scratch_database(tmp_path, migrate=False) as env:
        env["DJANGO_SETTINGS_MODULE"] = "athar.settings"
        child = (
            "import django; django.setup(); "
            f"from tests.test_data_migrations import run; run({app!r}, {name!r})"
        )
        done = subprocess.run(
            [sys.executable, "-c", child],
            env=env,
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=300,
        )
    assert done.returncode == 0, done.stderr[-4000:]
    assert done.stdout.strip().endswith("scenario passed"), done.stdout
