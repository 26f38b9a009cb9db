"""The review of evidence items and testimony: one transition table, in one place.

::

    new ───────submit──▶ submitted ──approve──▶ approved
    returned ──submit──▶ submitted ──return───▶ returned
                         submitted ──reject───▶ rejected
    approved ──(its item or statement changes)──▶ submitted

Each step is a ``ReviewDecision`` row and an audit entry (``legal/services/review.py``).
Four eyes: whoever submitted a record or last changed it cannot approve it. Returning or
rejecting takes a comment. A system admin reviews no case content, even as a member.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.utils.translation import gettext_lazy as _

from casefiles.access import Action
from casefiles.reviewing import ReviewStatus

S = ReviewStatus


@dataclass(frozen=True)
class Step:
    verb: str  # the audit action is "review.<verb>"
    label: object  # what the button says
    by_contributor: bool = False  # who adds the record moves it (else: who may approve)
    needs_comment: bool = False
    four_eyes: bool = False
    offered: bool = True  # False: taken by the app when content changes, never chosen


TRANSITIONS: dict[tuple[str, str], Step] = {
    (S.NEW, S.SUBMITTED): Step("submit", _("Submit for review"), by_contributor=True),
    (S.RETURNED, S.SUBMITTED): Step("submit", _("Submit again"), by_contributor=True),
    (S.SUBMITTED, S.APPROVED): Step("approve", _("Approve"), four_eyes=True),
    (S.SUBMITTED, S.RETURNED): Step("return", _("Return with a comment"), needs_comment=True),
    (S.SUBMITTED, S.REJECTED): Step("reject", _("Reject with a comment"), needs_comment=True),
    (S.APPROVED, S.SUBMITTED): Step("reopen", _("Back to review"), offered=False),
}

# Who contributes a record of each kind: they submit it.
CONTRIBUTOR_ACTIONS: dict[str, tuple[str, ...]] = {
    "item": (Action.ADD_EVIDENCE, Action.REVIEW),
    "testimony": (Action.ADD_TESTIMONY,),
}
DECIDER_ACTIONS: tuple[str, ...] = (Action.APPROVE,)


def step(source: str, target: str) -> Step | None:
    return TRANSITIONS.get((source, target))


def actions_for(kind: str, move: Step) -> tuple[str, ...]:
    """The case actions any one of which lets a member take ``move`` on a ``kind``."""
    return CONTRIBUTOR_ACTIONS[kind] if move.by_contributor else DECIDER_ACTIONS
