"""Testimony: statements, their versions, and the diff between two versions (their review
is legal's: ``legal/review.py``)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.db.models import Max
from django.utils.translation import gettext as _

from casefiles import audit
from casefiles.access import Action, active_membership_q
from casefiles.models import Case
from casefiles.reviewing import ReviewStatus, content_changed_within

from .. import linediff
from ..models import (
    CaseRole,
    Person,
    Testimony,
    TestimonyVersion,
    text_sha256,
)
from ..protection import (
    forget_interviewers,
    statement_refusal,
    testimony_refusal,
)
from .common import _require

if TYPE_CHECKING:
    from django.contrib.auth.models import User as Account

# Stored as is, whatever the interviewer's language: the history reads the same for all.
FIRST_VERSION = "First version"


def create_testimony(
    *,
    actor: Account,
    case: Case,
    witness: Person,
    text: str,
    taken_at: datetime,
    language: str,
    mode: str,
    interviewers: Sequence[Any] = (),
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
    with transaction.atomic(durable=True):
        testimony.save()
        testimony.interviewers.set(interviewers)
        forget_interviewers(witness)  # who may now reveal the witness has changed
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
    *, actor: Account, testimony: Testimony, text: str, reason: str
) -> TestimonyVersion:
    """Add a version to a new, returned or approved testimony; earlier versions stay as
    they were. An approved one goes back for review first (``approved → submitted``, in
    this transaction), so no version is ever added to an approved statement.

    Only by who may read the statement: a new version shows what changed."""
    _require(actor, Action.ADD_TESTIMONY, testimony.case)
    if refusal := statement_refusal(actor, testimony.witness, testimony.case):
        raise PermissionDenied(refusal)
    if not reason.strip():
        raise ValidationError({"reason": _("Say why the statement changes.")})
    if not text.strip():
        raise ValidationError({"text": _("The statement is empty.")})
    with transaction.atomic(durable=True):
        locked = Testimony.objects.select_for_update().get(pk=testimony.pk)
        if not locked.editable:
            raise ValidationError(_("A testimony under review or rejected cannot be changed."))
        if locked.status == ReviewStatus.APPROVED:
            content_changed_within(actor, locked, text_sha256(text))
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


def diff_versions(old: TestimonyVersion, new: TestimonyVersion) -> list[tuple[str, str | int]]:
    """A line diff for the page as (tag, line) pairs, tag one of ' ', '-', '+', with each
    long run of unchanged lines folded into one ('…', how many) pair.

    Its work grows with the statements' length, never with its square (``linediff``).
    """
    rows = linediff.diff_lines(old.text.splitlines(), new.text.splitlines())
    return linediff.with_context(rows)
