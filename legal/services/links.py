"""Links between evidence or testimony and the legal elements of crimes."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.utils.translation import gettext as _

from casefiles import audit
from casefiles.models import Case
from casefiles.services import one_person_refusal

from ..models import ElementLink, LegalElement, LinkConfirmation, LinkWithdrawal, Stance
from .common import Reviewed, record_fields, require_reviewer

if TYPE_CHECKING:
    from django.contrib.auth.models import User as Account


def link_to_element(
    *,
    actor: Account,
    case: Case,
    record: Reviewed,
    element: LegalElement,
    stance: str,
    proposition: str,
) -> ElementLink:
    """Tie an item or a testimony to an element, with the proposition in the lawyer's
    words. It counts as reviewed once a second lawyer confirms it."""
    require_reviewer(actor, case, record)
    proposition = proposition.strip()
    if not proposition:
        raise ValidationError({"proposition": _("Say in your words what it shows.")})
    if stance not in Stance.values:
        raise ValidationError({"stance": _("Choose supports, contradicts or context.")})
    if element.retired_at is not None:
        raise ValidationError({"element": _("This element is retired: link a current one.")})
    with transaction.atomic(durable=True):
        link = ElementLink.objects.create(
            case=case,
            element=element,
            stance=stance,
            proposition=proposition,
            author=actor,
            **record_fields(record),
        )
        audit.record(
            actor,
            "legal.link",
            target=link,
            case=case,
            binds={ElementLink: [link.pk]},
            element=element.code,
            record=str(record),
            stance=stance,
        )
    return link


def confirm_link(*, actor: Account, link: ElementLink, note: str = "") -> LinkConfirmation:
    """A second lawyer confirms a link: never its author (four eyes)."""
    require_reviewer(actor, link.case, link.record)
    if link.author_id == actor.pk:
        raise ValidationError(_("Who made a link cannot confirm it: a second lawyer does."))
    if refusal := one_person_refusal(actor, link.author_id):
        raise ValidationError(refusal)
    with transaction.atomic(durable=True):
        locked = ElementLink.objects.select_for_update().get(pk=link.pk)
        if LinkConfirmation.objects.filter(link=locked).exists():
            raise ValidationError(_("This link is confirmed already."))
        if LinkWithdrawal.objects.filter(link=locked).exists():
            raise ValidationError(_("This link was withdrawn."))
        confirmation = LinkConfirmation.objects.create(
            link=locked, confirmed_by=actor, note=note.strip()
        )
        audit.record(
            actor,
            "legal.link_confirm",
            target=locked,
            case=locked.case,
            binds={LinkConfirmation: [confirmation.pk]},
            element=link.element.code,
        )
    return confirmation


def withdraw_link(*, actor: Account, link: ElementLink, reason: str) -> LinkWithdrawal:
    """Take back a link made in error: it stays in the history and no longer counts.
    Its author or a case lead may; a reason is required."""
    from casefiles.access import Action, can

    require_reviewer(actor, link.case)
    if link.author_id != actor.pk and not can(actor, Action.MANAGE_MEMBERS, link.case):
        raise PermissionDenied(_("Only who made a link or a case lead may withdraw it."))
    if not reason.strip():
        raise ValidationError({"reason": _("Say why the link is withdrawn.")})
    with transaction.atomic(durable=True):
        locked = ElementLink.objects.select_for_update().get(pk=link.pk)
        if LinkWithdrawal.objects.filter(link=locked).exists():
            raise ValidationError(_("This link was withdrawn."))
        withdrawal = LinkWithdrawal.objects.create(
            link=locked, withdrawn_by=actor, reason=reason.strip()
        )
        audit.record(
            actor,
            "legal.link_withdraw",
            target=locked,
            case=locked.case,
            binds={LinkWithdrawal: [withdrawal.pk]},
            element=link.element.code,
            reason=withdrawal.reason,
        )
    return withdrawal
