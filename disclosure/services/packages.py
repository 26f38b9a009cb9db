"""A package's request and its four-eyes decision: request, approve, refuse, withdraw.
Each is one durable transaction with its audit entry."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from casefiles import audit
from casefiles.access import Action, Role, can, role_in
from casefiles.models import Case
from casefiles.services import one_person_refusal
from legal.models import LegalElement, SavedSearch
from people.models import ConsentScope

from ..contents import as_recorded_refusal, parse_chosen, review
from ..models import NAMEABLE_FIELDS, Package
from ..protected import shielded

if TYPE_CHECKING:
    from django.contrib.auth.models import User as Account

S = Package.Status


def _clean_text(value: str, name: str, limit: int, required: bool) -> str:
    value = (value or "").strip()
    if "\x00" in value or len(value) > limit:
        raise ValidationError({name: _("At most %(n)d characters, no NUL.") % {"n": limit}})
    if required and not value:
        raise ValidationError({name: _("This field is required.")})
    return value


def request_package(
    *,
    actor: Account,
    case: Case,
    recipient: str,
    purpose: str,
    recipient_reference: str = "",
    select: str = "all",
    search: SavedSearch | None = None,
    element: LegalElement | None = None,
    named_fields: list[str] | None = None,
) -> Package:
    """A lawyer or lead asks for a package. ``select``: ``all``, ``search`` (with
    ``search``), ``element`` (with ``element``) or references ``EV-…,T-…``."""
    if not can(actor, Action.EXPORT, case):
        raise PermissionDenied(_("Your role in this case does not allow disclosure."))
    recipient = _clean_text(recipient, "recipient", 200, True)
    recipient_reference = _clean_text(recipient_reference, "recipient_reference", 200, False)
    if purpose not in ConsentScope.values:
        raise ValidationError({"purpose": _("Choose one of the consent scopes.")})
    named = list(named_fields or [])
    if any(f not in NAMEABLE_FIELDS for f in named):
        raise ValidationError({"named_fields": _("Only names may be asked for.")})
    package = Package(
        case=case,
        requested_by=actor,
        recipient=recipient,
        recipient_reference=recipient_reference,
        purpose=purpose,
        named_fields=named,
    )
    select = (select or "").strip()
    if select == "all":
        package.selection_kind = Package.Selection.ALL
    elif select == "search":
        if search is None or search.case_id != case.pk:
            raise ValidationError({"search": _("Choose a saved search of this case.")})
        package.selection_kind, package.search = Package.Selection.SEARCH, search
    elif select == "element":
        if element is None:
            raise ValidationError({"element": _("Choose a legal element.")})
        package.selection_kind, package.element = Package.Selection.ELEMENT, element
    else:
        package.selection_kind = Package.Selection.CHOSEN
        package.chosen = parse_chosen(select)
    found = review(actor, package)
    if not (found.included or found.not_approved or found.refused):
        raise ValidationError(_("The selection names nothing in this case that you can see."))
    with transaction.atomic(durable=True):
        package.save()
        audit.record(
            actor,
            "disclosure.request",
            target=package,
            case=case,
            recipient=recipient,
            recipient_reference=recipient_reference,
            purpose=purpose,
            selection=package.selection_kind,
            chosen=package.chosen,
            search=search.pk if search else None,
            element=element.code if element else None,
            named_fields=named,
        )
    return package


def _decider(actor: Account, package: Package) -> None:
    if role_in(actor, package.case) != Role.LEAD:
        raise PermissionDenied(_("Only a lead of the case approves or refuses a package."))
    if actor.pk == package.requested_by_id:
        raise PermissionDenied(_("A package is decided by a lead who did not request it."))


def _locked(package: Package, *allowed: str) -> Package:
    row = Package.objects.select_for_update().get(pk=package.pk)
    if row.status not in allowed:
        raise ValidationError(
            _("This package is %(status)s: that step is not open.")
            % {"status": row.get_status_display()}
        )
    row.case = package.case
    return row


def _kept(found, kept_fields: dict[str, dict[str, str]] | None) -> dict[str, dict[str, str]]:
    """The approver's kept fields (``{item reference: {field: reason}}``), each one a
    field the preview flags, with a reason; or the error saying which is not."""
    flagged = {(line.ref, m.field) for line, m in found.matches}
    by_ref = {line.ref: line.pk for line in found.items}
    kept: dict[str, dict[str, str]] = {}
    for ref, fields in (kept_fields or {}).items():
        for name, reason in fields.items():
            if (ref, name) not in flagged:
                raise ValidationError(
                    _("%(ref)s: its %(field)s names no protected person: nothing to keep.")
                    % {"ref": ref, "field": name}
                )
            reason = _clean_text(reason, "kept_fields", 500, False)
            if not reason:
                raise ValidationError(
                    {"kept_fields": _("Say why each field kept may go: %(ref)s.") % {"ref": ref}}
                )
            kept.setdefault(str(by_ref[ref]), {})[name] = reason
    if refusal := as_recorded_refusal(found, kept):
        raise ValidationError(refusal)
    return kept


def approve_package(
    *,
    actor: Account,
    package: Package,
    allowed_fields: list[str] | None = None,
    kept_fields: dict[str, dict[str, str]] | None = None,
) -> Package:
    """A lead who did not request it approves: what goes in is frozen as the preview
    shows it to the requester now. A whole item's field that names a protected person
    goes withheld unless ``kept_fields`` (``{reference: {field: reason}}``) keeps it."""
    _decider(actor, package)
    if refusal := one_person_refusal(actor, package.requested_by_id):
        raise ValidationError(refusal)
    allowed = [f for f in (allowed_fields or []) if f in package.named_fields]
    found = review(package.requested_by, package)
    if not found.included:
        raise ValidationError(_("Nothing in this selection may go in: refuse it instead."))
    kept = _kept(found, kept_fields)
    withheld: dict[str, list[str]] = {}
    for line in found.items:
        fields = shielded(line.matches, kept.get(str(line.pk), {}))
        if fields:
            withheld[str(line.pk)] = fields
    contents = {
        "items": [line.pk for line in found.items],
        "testimonies": [line.pk for line in found.testimonies],
        "redacted": {str(line.pk): line.redaction for line in found.items if line.redaction},
        "withheld_fields": withheld,
        "kept_fields": kept,
    }
    refs = {str(line.pk): line.ref for line in found.items}
    with transaction.atomic(durable=True):
        row = _locked(package, S.REQUESTED)
        row.status, row.decided_by, row.decided_at = S.APPROVED, actor, timezone.now()
        row.allowed_fields, row.contents = allowed, contents
        row.total = len(contents["items"]) + len(contents["testimonies"])
        row.save()
        audit.record(
            actor,
            "disclosure.approve",
            target=row,
            case=row.case,
            items=[line.ref for line in found.items],
            testimonies=[line.ref for line in found.testimonies],
            not_approved=[line.ref for line in found.not_approved],
            refused={line.ref: line.reason for line in found.refused},
            allowed_fields=allowed,
            withheld_fields={refs[pk]: fields for pk, fields in withheld.items()},
            kept_fields={refs[pk]: fields for pk, fields in kept.items()},
        )
    return row


def refuse_package(*, actor: Account, package: Package, reason: str) -> Package:
    _decider(actor, package)
    reason = _clean_text(reason, "reason", 2000, True)
    with transaction.atomic(durable=True):
        row = _locked(package, S.REQUESTED)
        row.status, row.decided_by, row.decided_at, row.reason = (
            S.REFUSED,
            actor,
            timezone.now(),
            reason,
        )
        row.save()
        audit.record(actor, "disclosure.refuse", target=row, case=row.case, reason=reason)
    return row


def withdraw_package(*, actor: Account, package: Package, reason: str = "") -> Package:
    """Who requested it, or a lead, withdraws a package not yet built."""
    if actor.pk != package.requested_by_id and role_in(actor, package.case) != Role.LEAD:
        raise PermissionDenied(_("Only who requested a package, or a lead, withdraws it."))
    reason = _clean_text(reason, "reason", 2000, False)
    with transaction.atomic(durable=True):
        row = _locked(package, S.REQUESTED, S.APPROVED, S.FAILED)
        row.status, row.reason = S.WITHDRAWN, reason
        row.save()
        audit.record(actor, "disclosure.withdraw", target=row, case=row.case, reason=reason)
    return row
