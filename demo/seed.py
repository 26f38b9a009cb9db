"""Load the demo (``manage.py seed_demo``): every write goes through the apps' services, so
the audit log tells the story as it would have happened.

Each step finds what an earlier run made and makes only what is missing: a second run
changes nothing, and a run cut short is completed by the next one. There is no
enclosing transaction: each service commits its own write with its audit entry.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management import call_command

from casefiles import services as case_services
from casefiles.models import AuditCheckpoint, Case, GrantRequest, Membership
from evidence import services as evidence_services
from evidence.models import CustodyEvent, EvidenceItem, Identification, IntakeBatch
from legal.services import review
from people import crypto
from people import services as people_services
from people.models import CaseRole, Consent, Identity, Person, Relation, Testimony

from . import incidents, lawyers, missing, photos, story


class Seeder:
    """One run of the demo seed; ``created`` counts what it wrote."""

    def __init__(self, say: Callable[[str], None] = lambda _: None) -> None:
        self.say = say
        self.created = 0
        self.users: dict[str, Any] = {}
        self.people: dict[str, Person] = {}
        self.case: Case  # the main case, set once the cases exist (run)

    def run(self) -> int:
        self.accounts()
        self.cases()
        self.case = Case.objects.get(reference=story.MAIN_CASE)
        self.photographs()
        self.register_people()
        self.testimony()
        self.consents()
        self.identification()
        lawyers.LawyersWork(self).run()
        incidents.IncidentStory(self).run()
        missing.MissingStory(self).run()
        self.checkpoint()
        return self.created

    def _made(self, what: str, n: int = 1) -> None:
        self.created += n
        self.say(what)

    # --- accounts and cases ---------------------------------------------------------

    def accounts(self) -> None:
        for username, full_name, groups, staff in story.DEMO_USERS:
            user, new = get_user_model().objects.get_or_create(
                username=username,
                defaults={
                    "first_name": full_name.split()[0],
                    "last_name": full_name.split()[-1],
                    "is_staff": staff,
                },
            )
            if new:
                user.set_password(story.demo_password(username))
                user.save()
                user.groups.set(Group.objects.filter(name__in=groups))
                self._made(f"account {username}")
            self.users[username] = user

    def cases(self) -> None:
        admin = self.users["admin"]
        for spec in story.DEMO_CASES:
            case = Case.objects.filter(reference=spec["reference"]).first()
            if case is None:
                fields = {k: v for k, v in spec.items() if k != "members"}
                case = case_services.create_case(actor=admin, **fields)
                self._made(f"case {case.reference}")
            for username, role in spec["members"].items():
                user = self.users[username]
                if not Membership.objects.active().filter(user=user, case=case).exists():
                    self._grant(case, user, role)
                    self._made(f"{username} is {role} of {case.reference}")

    def _grant(self, case: Case, user, role: str) -> None:
        """The first admin grants; a grant that needs a second person (a lead or an
        investigator granted by an admin who is not the case's lead) is approved by the
        second admin, as on the Access requests page."""
        admin, second = self.users["admin"], self.users["admin2"]
        waiting = GrantRequest.objects.filter(
            case=case, user=user, outcome=GrantRequest.Outcome.PENDING
        ).first()  # left by an interrupted run
        if waiting is None:
            result = case_services.grant_or_ask(actor=admin, case=case, user=user, role=role)
            if not isinstance(result, GrantRequest):
                return
            waiting = result
        case_services.decide_grant(actor=second, request=waiting, approve=True)

    # --- evidence -------------------------------------------------------------------

    def photographs(self) -> None:
        """The camera card, taken in as one batch with the custodian's checksum list (the
        acquisition is each photo's first custody event); then the second stick of the
        README's example, written but not taken in."""
        demo_dir = Path(settings.DATA_DIR) / "demo"
        photos.write_demo_medium(demo_dir / "usb-stick")
        done = IntakeBatch.objects.filter(
            case=self.case, acquired_from=story.CARD_SOURCE, finished_at__isnull=False
        )
        if done.exists():
            return
        folder = demo_dir / story.CARD_FOLDER
        listing = photos.write_camera_card(folder)
        before = EvidenceItem.objects.filter(case=self.case).count()
        out = io.StringIO()
        # The ingest command: the same entry point, checks and resumption as by hand.
        call_command(
            "ingest",
            str(folder),
            case=self.case.reference,
            source=story.CARD_SOURCE,
            medium=story.CARD_MEDIUM,
            manifest=listing,
            jobs=1,
            username="investigator",
            stdout=out,
            stderr=out,
        )
        self._made(
            "camera card taken in", EvidenceItem.objects.filter(case=self.case).count() - before
        )

    # --- people ---------------------------------------------------------------------

    def _find(self, spec: dict[str, Any]) -> Person | None:
        """The demo person registered from ``spec``: found by the keyed digest of their
        Latin name (the blind index), so nothing is decrypted and nothing audited."""
        digest = crypto.blind_index(spec["identity"]["name_latin"])
        return (
            Person.objects.filter(case=self.case, name_digests__digest=digest)
            .order_by("created_at")
            .first()
        )

    def register_people(self) -> None:
        for spec in story.PEOPLE:
            actor = self.users[spec["by"]]
            person = self._find(spec)
            if person is None:
                person = people_services.register_person(
                    actor=actor,
                    case=self.case,
                    role=spec["role"],
                    identity=Identity(**spec["identity"]),
                    protection_level=spec["protection"],
                    **spec.get("victim", {}),
                )
                self._made(f"{spec['key']} registered as {person.code}")
            for role in spec.get("roles", []):
                if not CaseRole.objects.filter(person=person, case=self.case, role=role).exists():
                    people_services.add_case_role(
                        actor=actor, person=person, case=self.case, role=role
                    )
                    self._made(f"{person.code} is also {role}")
            if spec.get("raise_to") and person.protection_level != spec["raise_to"]:
                people_services.change_protection(
                    actor=actor, person=person, level=spec["raise_to"], reason=spec["raise_reason"]
                )
                self._made(f"{person.code} protection raised to {spec['raise_to']}")
            self.people[spec["key"]] = person
        for key, kind, other in story.RELATIONS:
            person, other_person = self.people[key], self.people[other]
            if not Relation.objects.filter(person=person, kind=kind, other=other_person).exists():
                people_services.relate_people(
                    actor=self.users["investigator"],
                    case=self.case,
                    person=person,
                    kind=kind,
                    other=other_person,
                )
                self._made(f"{person.code} is {kind} of {other_person.code}")

    def testimony(self) -> None:
        """Logged, corrected once (a second version), submitted; approved by another."""
        spec = story.TESTIMONY
        author, approver = self.users[spec["by"]], self.users[spec["approver"]]
        witness = self.people[spec["witness"]]
        testimony = Testimony.objects.filter(case=self.case, witness=witness).first()
        if testimony is None:
            testimony = people_services.create_testimony(
                actor=author,
                case=self.case,
                witness=witness,
                text=story.STATEMENT_V1,
                taken_at=spec["taken_at"],
                language=spec["language"],
                mode=spec["mode"],
                interviewers=[author],
                interpreter=spec["interpreter"],
                place=spec["place"],
            )
            self._made(f"testimony T-{testimony.pk:04d} logged")
        if testimony.versions.count() < 2:
            people_services.revise_testimony(
                actor=author,
                testimony=testimony,
                text=story.STATEMENT_V2,
                reason=story.REVISION_REASON,
            )
            self._made("its second version")
        if testimony.status == Testimony.Status.NEW:
            review.decide(actor=author, record=testimony, to_status=Testimony.Status.SUBMITTED)
            self._made("submitted for review")
        if testimony.status == Testimony.Status.SUBMITTED:
            review.decide(
                actor=approver,
                record=testimony,
                to_status=Testimony.Status.APPROVED,
                comment="Checked against the recording (fictional).",
            )
            self._made(f"approved by {approver.get_username()}")

    def consents(self) -> None:
        actor = self.users["investigator"]
        for key, scopes, how, given_on, bodies in story.CONSENTS:
            person = self.people[key]
            grants = Consent.objects.filter(
                person=person, case=self.case, kind=Consent.Kind.GRANT, given_on=given_on
            )
            if not grants.exists():
                people_services.record_consent(
                    actor=self.users["lead"] if key == "photographer" else actor,
                    case=self.case,
                    person=person,
                    scopes=scopes,
                    how=how,
                    given_on=given_on,
                    bodies=bodies,
                )
                self._made(f"consent of {person.code}")
        for key, granted_on, withdrawn, how, on in story.WITHDRAWALS:
            person = self.people[key]
            grant = Consent.objects.get(
                person=person, case=self.case, kind=Consent.Kind.GRANT, given_on=granted_on
            )
            if not grant.withdrawals.exists():
                people_services.withdraw_consent(
                    actor=actor, consent=grant, how=how, given_on=on, scopes=withdrawn
                )
                self._made(f"{person.code} withdrew {', '.join(withdrawn)}")

    # --- the identification, and a later link of custody ------------------------------

    def identification(self) -> None:
        spec = story.IDENTIFICATION
        actor = self.users[spec["by"]]
        item = (
            EvidenceItem.objects.filter(
                case=self.case,
                batch__acquired_from=story.CARD_SOURCE,
                original_path__endswith=photos.card_name(spec["photo"]),
            )
            .order_by("pk")
            .first()
        )
        if item is None:
            raise RuntimeError("The demo photograph to identify is missing: run seed_demo again.")
        witness, identified = self.people[spec["witness"]], self.people[spec["identified"]]
        if not Identification.objects.filter(
            item=item, witness=witness, identified=identified
        ).exists():
            evidence_services.record_identification(
                actor=actor,
                item=item,
                witness=witness,
                identified=identified,
                confidence=spec["confidence"],
                method=spec["method"],
                identified_on=spec["identified_on"],
                notes=spec["notes"],
            )
            self._made(f"{witness.code} identifies {identified.code} in {item.reference}")
        if item.title != spec["title"]:
            evidence_services.update_item(
                actor=actor, item=item, tags=["identified"], title=spec["title"]
            )
            self._made(f"{item.reference} titled")
        custody = story.CUSTODY
        if not CustodyEvent.objects.filter(item=item, action=custody["action"]).exists():
            evidence_services.record_custody_event(
                actor=self.users[custody["by"]],
                item=item,
                action=custody["action"],
                at=custody["at"],
                from_custodian=custody["from_custodian"],
                to_custodian=custody["to_custodian"],
                location=custody["location"],
                purpose=custody["purpose"],
            )
            self._made(f"{item.reference} transferred")

    def checkpoint(self) -> None:
        """A signed checkpoint of the audit log, last: of everything the demo wrote."""
        if self.created == 0 and AuditCheckpoint.objects.exists():
            return
        call_command("audit_checkpoint", stdout=io.StringIO())
        self._made("audit checkpoint signed")
