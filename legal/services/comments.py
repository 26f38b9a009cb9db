"""Comments of case members on items and testimonies, with @mentions of members."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.utils.translation import gettext as _

from casefiles import audit
from casefiles.access import Action, active_membership_q, can, is_system_admin
from casefiles.models import Case
from people.models import Testimony
from people.protection import statement_refusal

from ..models import Comment
from .common import Reviewed, record_fields

if TYPE_CHECKING:
    from django.contrib.auth.models import User as Account

MENTION = re.compile(r"(?<![\w@])@([\w.+-]+)")


def mentioned_members(case: Case, text: str) -> list[Account]:
    """The active members of ``case`` whose username the text mentions (``@name``);
    a name that is no member's is left as plain text."""
    names = {m.rstrip(".") for m in MENTION.findall(text)}
    if not names:
        return []
    members = case.memberships.filter(active_membership_q()).values("user_id")
    users = get_user_model().objects.filter(username__in=names, pk__in=members, is_active=True)
    return list(users.order_by("username"))


def add_comment(*, actor: Account, case: Case, record: Reviewed, text: str) -> Comment:
    """A member comments (observers read only). On a testimony, only who may read its
    statement: a comment speaks of it."""
    if is_system_admin(actor):
        raise PermissionDenied(_("A system admin does not review case content."))
    if not (can(actor, Action.REVIEW, case) or can(actor, Action.ADD_EVIDENCE, case)):
        raise PermissionDenied(_("Your role in this case does not allow comments."))
    if record.case_id != case.pk:
        raise ValidationError(_("That record is not in this case."))
    if isinstance(record, Testimony) and statement_refusal(actor, record.witness, case):
        raise PermissionDenied(_("You may not read this statement, so you may not comment on it."))
    text = text.strip()
    if not text:
        raise ValidationError({"text": _("The comment is empty.")})
    mentioned = mentioned_members(case, text)
    with transaction.atomic(durable=True):
        comment = Comment.objects.create(
            case=case, author=actor, text=text, **record_fields(record)
        )
        comment.mentions.set(mentioned)
        audit.record(
            actor,
            "legal.comment",
            target=record,
            case=case,
            binds={Comment: [comment.pk]},
            mentions=[u.get_username() for u in mentioned],
        )
    return comment
