"""Writes to cases, memberships, access requests and checkpoints: one function per write,
audited in its transaction. One module per concern; the public names are all here, so
``from casefiles import services; services.create_case(...)`` works."""

from .access_requests import can_decide, decide_access_request, request_access
from .cases import create_case, update_case
from .checkpoints import (
    BrokenChain,
    CheckpointAge,
    RetiredSigningKey,
    checkpoint_age,
    consistency_between,
    create_audit_checkpoint,
    current_signing_key,
    publish_audit_checkpoint,
    register_signing_key,
    signing_keys_listing,
)
from .cosignatures import add_cosignature, known_witnesses, republish_cosignatures
from .holders import (
    check_not_held,
    held_by_another_admin,
    holders,
    holds,
    one_person_refusal,
    only_admin,
)
from .memberships import (
    SecondAdminNeeded,
    can_decide_grant,
    decide_grant,
    grant_membership,
    grant_or_ask,
    nobody_to_decide,
    revoke_membership,
    second_admin_needed,
    update_membership,
)

__all__ = [
    "BrokenChain",
    "CheckpointAge",
    "RetiredSigningKey",
    "SecondAdminNeeded",
    "add_cosignature",
    "can_decide",
    "can_decide_grant",
    "check_not_held",
    "checkpoint_age",
    "consistency_between",
    "create_audit_checkpoint",
    "create_case",
    "current_signing_key",
    "decide_access_request",
    "decide_grant",
    "grant_membership",
    "grant_or_ask",
    "held_by_another_admin",
    "holders",
    "holds",
    "known_witnesses",
    "nobody_to_decide",
    "one_person_refusal",
    "only_admin",
    "publish_audit_checkpoint",
    "register_signing_key",
    "republish_cosignatures",
    "request_access",
    "revoke_membership",
    "second_admin_needed",
    "signing_keys_listing",
    "update_case",
    "update_membership",
]
