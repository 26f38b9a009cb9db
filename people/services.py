"""Writes to people, consent and testimony. One function per write, audited in its
transaction. Audit entries name people by their code, never by their identity."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from django.core.exceptions import PermissionDenied, ValidationError
from django.db import IntegrityError, transaction
from django.db.models import Max
from django.utils.translation import gettext as _

from casefiles import audit
from casefiles.access import Action, active_membership_q, can
from casefiles.models import Case

from . import crypto, linediff
from .models import (
    CODE_PREFIXES,
    PROTECTED_FIELDS,
    CaseRole,
    Consent,
    ConsentScope,
    Identity,
    NameDigest,
    Person,
    ProtectionChange,
    Relation,
    ReviewDecision,
    Testimony,
    TestimonyVersion,
    text_sha256,
)
from .protection import (
    protection_change_refusal,
    reveal_refusal,
    statement_refusal,
    testimony_refusal,
)

# Stored as is, whatever the interviewer's language: the history reads the same for all.
FIRST_VERSION = "First version"

VICTIM_FIELDS = (
    "victim_status",
    "last_seen_on",
    "last_seen_place",
    "detainee_number",
    "detention_branch",
)


def _require(actor: Any, action: str, case: Case) -> None:
    # Views already answer 404 to users without the right; this keeps other callers honest.
    if not can(actor, action, case):
        raise PermissionDenied(action)


def _next_code(role: str) -> str:
    prefix = CODE_PREFIXES[role]
    codes = Person.objects.filter(code__startswith=f"{prefix}-").values_list("code", flat=True)
    highest = max(
        (int(c.split("-", 1)[1]) for c in codes if c.split("-", 1)[1].isdigit()), default=0
    )
    return f"{prefix}-{highest + 1:04d}"


def _index_names(person: Person, identity: Identity) -> None:
    digests = {d for d in map(crypto.blind_index, identity.names()) if d}
    NameDigest.objects.filter(person=person).exclude(digest__in=digests).delete()
    have = set(NameDigest.objects.filter(person=person).values_list("digest", flat=True))
    NameDigest.objects.bulk_create(
        [NameDigest(person=person, digest=d) for d in sorted(digests - have)]
    )


def register_person(
    *,
    actor: Any,
    case: Case,
    role: str,
    identity: Identity,
    protection_level: str = Person.Protection.STANDARD,
    **victim: Any,
) -> Person:
    """Register a person in a case under a new code; their identity is stored encrypted."""
    _require(actor, Action.ADD_PEOPLE, case)
    unknown = set(victim) - set(VICTIM_FIELDS)
    if unknown:
        raise TypeError(f"unknown fields: {sorted(unknown)}")
    if not (identity.name_ar.strip() or identity.name_latin.strip()):
        raise ValidationError(_("Give the name in Arabic or in Latin script."))
    for attempt in range(5):
        person = Person(case=case, protection_level=protection_level, created_by=actor, **victim)
        person.seal_identity(identity)
        person.code = _next_code(role)
        person.full_clean(exclude=["code"])
        try:
            with transaction.atomic():
                person.save(force_insert=True)
                CaseRole.objects.create(person=person, case=case, role=role, recorded_by=actor)
                _index_names(person, identity)
                audit.record(
                    actor,
                    "people.register",
                    target=person,
                    case=case,
                    code=person.code,
                    role=role,
                    protection_level=protection_level,
                )
            return person
        except IntegrityError:
            # Another registration took the same code meanwhile: take the next one.
            if attempt == 4:
                raise
    raise AssertionError("unreachable")


def add_case_role(*, actor: Any, person: Person, case: Case, role: str) -> CaseRole:
    """Give a registered person a (further) role, in their case or another one."""
    _require(actor, Action.ADD_PEOPLE, case)
    _require(actor, Action.ADD_PEOPLE, person.case)
    if (
        case.pk != person.case_id
        and person.protection_level != Person.Protection.STANDARD
        and not CaseRole.objects.filter(person=person, case=case).exists()
    ):
        # A first role in another case opens the identity to that case's lead (and, at
        # High, to the interviewers there): a disclosure made only by someone who may
        # already reveal this person in their own case, or a lead of one case could reach
        # the protected people of any other case they also work in.
        _require(actor, Action.REVEAL_IDENTITY, person.case)
        if refusal := reveal_refusal(actor, person, person.case):
            raise PermissionDenied(refusal)
    if CaseRole.objects.filter(person=person, case=case, role=role).exists():
        raise ValidationError(_("This person already has that role in the case."))
    with transaction.atomic():
        case_role = CaseRole.objects.create(person=person, case=case, role=role, recorded_by=actor)
        audit.record(actor, "people.add_role", target=person, case=case, role=role)
    return case_role


def relate_people(*, actor: Any, case: Case, person: Person, kind: str, other: Person) -> Relation:
    """Record that ``person`` is ``kind`` of ``other`` (both must belong to the case)."""
    _require(actor, Action.ADD_PEOPLE, case)
    if person.pk == other.pk:
        raise ValidationError(_("A person cannot be related to themselves."))
    in_case = set(
        CaseRole.objects.filter(case=case, person__in=[person, other]).values_list(
            "person_id", flat=True
        )
    )
    if in_case != {person.pk, other.pk}:
        raise ValidationError(_("Both people must have a role in this case."))
    if Relation.objects.filter(person=person, kind=kind, other=other).exists():
        raise ValidationError(_("This relation is already recorded."))
    with transaction.atomic():
        relation = Relation.objects.create(
            case=case, person=person, kind=kind, other=other, recorded_by=actor
        )
        audit.record(
            actor,
            "people.relate",
            target=person,
            case=case,
            kind=kind,
            other=other.code,
        )
    return relation


def change_protection(*, actor: Any, person: Person, level: str, reason: str) -> ProtectionChange:
    """Raise or lower a person's protection level, saying why.

    Only someone who may reveal the person now changes it; lowering it (which opens the
    identity to more members) only the lead of the person's case. The change is a row of
    its own (append-only, bound into the audit chain) written before the level: the
    database refuses a level that no such row records.
    """
    case = person.case
    if refusal := protection_change_refusal(actor, person, case):
        raise PermissionDenied(refusal)
    if level not in Person.Protection.values:
        raise ValidationError(_("Choose a protection level."))
    reason = reason.strip()
    if len(reason) < 5:
        raise ValidationError({"reason": _("Say why the protection level changes.")})
    with transaction.atomic():
        locked = Person.objects.select_for_update().get(pk=person.pk)
        old = locked.protection_level
        if level == old:
            raise ValidationError(_("The person already has this protection level."))
        # Asked again of the locked row: the level it lowers from is the one now.
        if refusal := protection_change_refusal(actor, locked, case, level):
            raise PermissionDenied(refusal)
        change = ProtectionChange.objects.create(
            person=locked, from_level=old, to_level=level, reason=reason, changed_by=actor
        )
        Person.objects.filter(pk=locked.pk).update(protection_level=level)
        audit.record(
            actor,
            "people.protection_change",
            target=locked,
            case=case,
            binds={ProtectionChange: [change.pk]},
            from_level=old,
            to_level=level,
            reason=reason[:1000],
        )
    person.protection_level = level
    return change


def reveal_identity(*, actor: Any, case: Case, person: Person, reason: str) -> Identity:
    """Decrypt a person's identity for one page view; the reveal and its reason are audited.

    The entry is written before anything is returned: no reveal without its trace.
    """
    _require(actor, Action.REVEAL_IDENTITY, case)
    if not CaseRole.objects.filter(person=person, case=case).exists():
        raise PermissionDenied("person has no role in this case")
    if refusal := reveal_refusal(actor, person, case):
        raise PermissionDenied(refusal)
    reason = reason.strip()
    if len(reason) < 5:
        raise ValidationError(_("State why you need to see this identity."))
    with transaction.atomic():
        audit.record(
            actor, "people.reveal_identity", target=person, case=case, reason=reason[:1000]
        )
    return person.open_identity()


def find_people_by_name(*, actor: Any, case: Case, name: str) -> list[Person]:
    """People of this case registered under this name (or a spelling of it).

    Compares keyed digests of normalised names: nothing is decrypted. Only this case is
    searched, where the actor may reveal identities: a match in another case would tell
    who someone is there without that case's permission or audit trail; and only people
    whose identity the actor may reveal are returned. Audited without the name, since a
    match tells who someone is.
    """
    _require(actor, Action.REVEAL_IDENTITY, case)
    digest = crypto.blind_index(name)
    if not digest:
        return []
    matched = list(
        Person.objects.visible_to(actor)
        .filter(case_roles__case=case, name_digests__digest=digest)
        .distinct()
    )
    # A match names who someone is: not for those their protection level keeps it from.
    found = [p for p in matched if reveal_refusal(actor, p, case) is None]
    with transaction.atomic():
        audit.record(
            actor,
            "people.name_lookup",
            case=case,
            matches=[p.code for p in found],
            withheld=len(matched) - len(found),
        )
    return found


# --- consent --------------------------------------------------------------------


def record_consent(
    *,
    actor: Any,
    case: Case,
    person: Person,
    scopes: list[str],
    how: str,
    given_on: date,
    bodies: str = "",
    notes: str = "",
) -> Consent:
    """Record a consent the person gave, for the listed scopes."""
    _require(actor, Action.ADD_TESTIMONY, case)
    scopes = sorted(set(scopes))
    if not scopes or not set(scopes) <= set(ConsentScope.values):
        raise ValidationError(_("Choose at least one scope."))
    if ConsentScope.SHARING in scopes and not bodies.strip():
        raise ValidationError(_("Name the bodies the testimony may be shared with."))
    consent = Consent(
        person=person,
        case=case,
        kind=Consent.Kind.GRANT,
        scopes=scopes,
        bodies=bodies.strip(),
        how=how,
        given_on=given_on,
        notes=notes,
        recorded_by=actor,
    )
    consent.full_clean()
    with transaction.atomic():
        consent.save()
        audit.record(
            actor,
            "consent.record",
            target=consent,
            case=case,
            binds={Consent: [consent.pk]},
            person=person.code,
            scopes=scopes,
            how=how,
            given_on=given_on.isoformat(),
        )
    return consent


def withdraw_consent(
    *,
    actor: Any,
    consent: Consent,
    how: str,
    given_on: date,
    scopes: list[str] | None = None,
    notes: str = "",
) -> Consent:
    """Withdraw some or all scopes of a consent: a new record, the old one stays."""
    _require(actor, Action.ADD_TESTIMONY, consent.case)
    if consent.kind != Consent.Kind.GRANT:
        raise ValidationError(_("Only a consent that was given can be withdrawn."))
    scopes = sorted(set(scopes or consent.scopes))
    if not set(scopes) <= set(consent.scopes):
        raise ValidationError(_("Only scopes of this consent can be withdrawn."))
    withdrawal = Consent(
        person=consent.person,
        case=consent.case,
        kind=Consent.Kind.WITHDRAWAL,
        scopes=scopes,
        how=how,
        given_on=given_on,
        withdraws=consent,
        notes=notes,
        recorded_by=actor,
    )
    withdrawal.full_clean()
    with transaction.atomic():
        withdrawal.save()
        audit.record(
            actor,
            "consent.withdraw",
            target=withdrawal,
            case=consent.case,
            binds={Consent: [withdrawal.pk]},
            person=consent.person.code,
            withdraws=consent.pk,
            scopes=scopes,
        )
    return withdrawal


def consent_in_force(consent: Consent) -> list[str]:
    """The scopes of a given consent not withdrawn since."""
    withdrawn = {s for w in consent.withdrawals.all() for s in w.scopes}
    return [s for s in consent.scopes if s not in withdrawn]


@dataclass(frozen=True)
class SharingAnswer:
    allowed: bool
    reason: str
    consent: Consent | None = None

    def __bool__(self) -> bool:
        return self.allowed


def may_share_testimony(*, testimony: Testimony, purpose: str, body: str = "") -> SharingAnswer:
    """May this testimony be used for ``purpose`` (a ConsentScope), e.g. before an export?

    Yes when the witness gave consent for that scope in the testimony's case and has not
    withdrawn it; for sharing, the body must be one the consent names.
    """
    if purpose not in ConsentScope.values:
        raise ValueError(f"unknown purpose {purpose!r}")
    grants = (
        Consent.objects.filter(
            person=testimony.witness, case=testimony.case, kind=Consent.Kind.GRANT
        )
        .prefetch_related("withdrawals")
        .order_by("-given_on", "-pk")
    )
    asked = body.strip().casefold()
    saw_withdrawn = False
    for grant in grants:
        if purpose not in grant.scopes:
            continue
        if purpose not in consent_in_force(grant):
            saw_withdrawn = True
            continue
        if purpose == ConsentScope.SHARING and asked not in {
            b.casefold() for b in grant.body_list()
        }:
            continue
        return SharingAnswer(True, _("Consent given on %s.") % grant.given_on, grant)
    if saw_withdrawn:
        return SharingAnswer(False, _("Consent for this purpose was withdrawn."))
    return SharingAnswer(False, _("No consent for this purpose."))


# --- testimony ------------------------------------------------------------------


def create_testimony(
    *,
    actor: Any,
    case: Case,
    witness: Person,
    text: str,
    taken_at: datetime,
    language: str,
    mode: str,
    interviewers: list[Any] = (),
    interpreter: str = "",
    place: str = "",
    remote: bool = False,
) -> Testimony:
    """Log an interview as a draft testimony with its first version.

    The interviewers it names may then reveal a High-protection witness's identity: so
    for a protected witness only someone who may reveal it already logs one
    (``testimony_refusal``), and every interviewer must be a member of the case now.
    The entry names the interviewers.
    """
    _require(actor, Action.ADD_TESTIMONY, case)
    if not CaseRole.objects.filter(person=witness, case=case).exists():
        raise ValidationError(_("The witness must have a role in this case."))
    if refusal := testimony_refusal(actor, witness, case):
        raise PermissionDenied(refusal)
    interviewers = list(interviewers)
    members = set(case.memberships.filter(active_membership_q()).values_list("user_id", flat=True))
    if any(u.pk not in members for u in interviewers):
        raise ValidationError({"interviewers": _("Interviewers must be members of the case.")})
    if not text.strip():
        raise ValidationError({"text": _("The statement is empty.")})
    testimony = Testimony(
        case=case,
        witness=witness,
        taken_at=taken_at,
        language=language,
        mode=mode,
        interpreter=interpreter,
        place=place,
        remote=remote,
        created_by=actor,
    )
    testimony.full_clean()
    with transaction.atomic():
        testimony.save()
        testimony.interviewers.set(interviewers)
        version = TestimonyVersion(
            testimony=testimony,
            number=1,
            text=text,
            reason=FIRST_VERSION,
            sha256=text_sha256(text),
            author=actor,
        )
        version.save()
        audit.record(
            actor,
            "testimony.create",
            target=testimony,
            case=case,
            binds={TestimonyVersion: [version.pk]},
            witness=witness.code,
            interviewers=sorted(u.get_username() for u in interviewers),
            sha256=version.sha256,
        )
    return testimony


def revise_testimony(
    *, actor: Any, testimony: Testimony, text: str, reason: str
) -> TestimonyVersion:
    """Add a version to a draft or returned testimony; earlier versions stay as they were.

    Only by who may read the statement: a new version shows what changed."""
    _require(actor, Action.ADD_TESTIMONY, testimony.case)
    if refusal := statement_refusal(actor, testimony.witness, testimony.case):
        raise PermissionDenied(refusal)
    if not reason.strip():
        raise ValidationError({"reason": _("Say why the statement changes.")})
    if not text.strip():
        raise ValidationError({"text": _("The statement is empty.")})
    with transaction.atomic():
        locked = Testimony.objects.select_for_update().get(pk=testimony.pk)
        if not locked.editable:
            raise ValidationError(_("Only a draft or returned testimony can be changed."))
        last = locked.versions.aggregate(n=Max("number"))["n"] or 0
        version = TestimonyVersion(
            testimony=locked,
            number=last + 1,
            text=text,
            reason=reason.strip(),
            sha256=text_sha256(text),
            author=actor,
        )
        version.save()
        audit.record(
            actor,
            "testimony.revise",
            target=locked,
            case=locked.case,
            binds={TestimonyVersion: [version.pk]},
            version=version.number,
            sha256=version.sha256,
            reason=version.reason,
        )
    return version


# Which transitions exist, and the action each needs.
TRANSITIONS: dict[tuple[str, str], str] = {
    (Testimony.Status.DRAFT, Testimony.Status.SUBMITTED): Action.ADD_TESTIMONY,
    (Testimony.Status.RETURNED, Testimony.Status.SUBMITTED): Action.ADD_TESTIMONY,
    (Testimony.Status.SUBMITTED, Testimony.Status.APPROVED): Action.APPROVE,
    (Testimony.Status.SUBMITTED, Testimony.Status.RETURNED): Action.APPROVE,
}


def allowed_transitions(actor: Any, testimony: Testimony) -> list[str]:
    """The statuses ``actor`` may move the testimony to now (four-eyes included)."""
    targets = []
    for (source, target), action in TRANSITIONS.items():
        if source != testimony.status or not can(actor, action, testimony.case):
            continue
        if target == Testimony.Status.APPROVED and _had_a_hand_in(actor, testimony):
            continue
        targets.append(target)
    return targets


def _had_a_hand_in(actor: Any, testimony: Testimony) -> bool:
    """Four eyes: whoever submitted the testimony or wrote a version of it."""
    return testimony.submitted_by_id == actor.pk or testimony.versions.filter(author=actor).exists()


def decide_testimony(
    *, actor: Any, testimony: Testimony, to_status: str, comment: str = ""
) -> ReviewDecision:
    """Move a testimony through review. The one who submitted it cannot approve it."""
    comment = comment.strip()
    with transaction.atomic():
        locked = Testimony.objects.select_for_update().get(pk=testimony.pk)
        source = locked.status
        action = TRANSITIONS.get((source, to_status))
        if action is None:
            raise ValidationError(
                _("A %(from)s testimony cannot become %(to)s.")
                % {"from": Testimony.Status(source).label, "to": Testimony.Status(to_status).label}
            )
        _require(actor, action, locked.case)
        if to_status == Testimony.Status.APPROVED and _had_a_hand_in(actor, locked):
            raise ValidationError(
                _("Who submitted a testimony or wrote a version of it cannot approve it.")
            )
        if to_status == Testimony.Status.RETURNED and not comment:
            raise ValidationError({"comment": _("Say what needs to change.")})
        locked.status = to_status
        if to_status == Testimony.Status.SUBMITTED:
            locked.submitted_by = actor
        locked.save(update_fields=["status", "submitted_by"])
        decision = ReviewDecision.objects.create(
            testimony=locked, from_status=source, to_status=to_status, actor=actor, comment=comment
        )
        head = locked.versions.order_by("-number").first()
        audit.record(
            actor,
            f"testimony.{_VERB[to_status]}",
            target=locked,
            case=locked.case,
            binds={ReviewDecision: [decision.pk]},
            from_status=source,
            to_status=to_status,
            comment=comment,
            version=head.number if head else None,
            sha256=head.sha256 if head else "",
        )
    testimony.status, testimony.submitted_by_id = locked.status, locked.submitted_by_id
    return decision


_VERB = {
    Testimony.Status.SUBMITTED: "submit",
    Testimony.Status.APPROVED: "approve",
    Testimony.Status.RETURNED: "return",
}


def diff_versions(old: TestimonyVersion, new: TestimonyVersion) -> list[tuple[str, str | int]]:
    """A line diff for the page as (tag, line) pairs, tag one of ' ', '-', '+', with each
    long run of unchanged lines folded into one ('…', how many) pair.

    Its work grows with the statements' length, never with its square (``linediff``).
    """
    rows = linediff.diff_lines(old.text.splitlines(), new.text.splitlines())
    return linediff.with_context(rows)


# --- keys -----------------------------------------------------------------------


@dataclass(frozen=True)
class RotationReport:
    people: int
    reencrypted: int
    key_id: str


def rotate_field_keys(*, actor: Any = None, batch_size: int = 200) -> RotationReport:
    """Re-encrypt every identity under the current key and rebuild the name index.

    Values are decrypted with whichever configured key sealed them. Afterwards the old
    keys can be removed from ATHAR_FIELD_KEYS.
    """
    key_id = crypto.current_key_id()
    people = reencrypted = 0
    with transaction.atomic():
        for person in Person.objects.select_for_update().order_by("code").iterator(batch_size):
            identity = person.open_identity()
            stale = any(
                crypto.key_id_of(getattr(person, f"enc_{n}")) != key_id for n in PROTECTED_FIELDS
            )
            person.seal_identity(identity)
            person.save(update_fields=[f"enc_{n}" for n in PROTECTED_FIELDS])
            _index_names(person, identity)
            people += 1
            reencrypted += stale
        audit.record(
            actor, "people.rotate_keys", key_id=key_id, people=people, reencrypted=reencrypted
        )
    return RotationReport(people, reencrypted, key_id)
