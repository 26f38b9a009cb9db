"""Writes to people, consent and testimony, by concern: one function per write, audited
in its own durable transaction. Audit entries name people by their code, never by their
identity.

- ``registration``: registering a person, their roles in a case, relations between people;
- ``identity``: the protection level, revealing an identity, changing names, name look-up;
- ``rotation``: re-encrypting every sealed column (``people.sealed``) under a new key;
- ``consent``: recording and withdrawing consent, and asking it before sharing;
- ``victims``: a victim's status, the one the apps above read and change too;
- ``testimony``: statements, versions, the review, the diff between versions.

Callers use ``from people import services`` and the names below.
"""

from ..models import Identity
from .consent import (
    SharingAnswer,
    consent_in_force,
    may_share_testimony,
    record_consent,
    sharing_answers,
    withdraw_consent,
)
from .identity import (
    SealedValueBroken,
    change_names,
    change_protection,
    find_people_by_name,
    open_or_audit,
    reveal_identity,
    seal_failures,
)
from .registration import (
    VICTIM_FIELDS,
    add_case_role,
    register_person,
    reindex_names,
    relate_people,
)
from .rotation import RotationReport, rotate_field_keys
from .testimony import (
    FIRST_VERSION,
    create_testimony,
    diff_versions,
    revise_testimony,
)
from .victims import change_victim_status, set_victim_status_within

__all__ = [
    "FIRST_VERSION",
    "VICTIM_FIELDS",
    "Identity",
    "RotationReport",
    "SealedValueBroken",
    "SharingAnswer",
    "add_case_role",
    "change_names",
    "change_protection",
    "change_victim_status",
    "consent_in_force",
    "create_testimony",
    "diff_versions",
    "find_people_by_name",
    "may_share_testimony",
    "open_or_audit",
    "record_consent",
    "register_person",
    "reindex_names",
    "relate_people",
    "reveal_identity",
    "revise_testimony",
    "rotate_field_keys",
    "seal_failures",
    "set_victim_status_within",
    "sharing_answers",
    "withdraw_consent",
]
