"""The closed vocabulary of the audit log: every action any app records, with its label in
the reader's language.

Each app declares the actions it records in its own ``audit_actions.py`` (a dict
``ACTIONS``: code -> label); the core collects them from the installed apps, importing
none of them by name. The audit log page offers exactly these as filters, and
tests/casefiles/test_audit_labels.py fails when the code records an action that no app
declares.
"""

from __future__ import annotations

from functools import cache
from importlib import import_module

from django.apps import apps
from django.utils.functional import Promise
from django.utils.module_loading import module_has_submodule
from django.utils.translation import gettext_lazy as _

# The core's own actions: cases, access, the audit log itself, and the accounts the
# Django admin creates and changes.
ACTIONS: dict[str, str | Promise] = {
    "case.create": _("Case opened"),
    "case.update": _("Case changed"),
    "case.view": _("Case viewed"),
    "membership.grant": _("Access granted"),
    "membership.grant_ask": _("Access grant waiting for a second admin"),
    "membership.grant_refused": _("Access grant refused by a second admin"),
    "membership.grant_cancelled": _("Access grant withdrawn"),
    "membership.change": _("Access changed"),
    "membership.revoke": _("Access revoked"),
    "audit.view": _("Audit log viewed"),
    "audit.export": _("Audit log exported"),
    "audit.view_target": _("Access history viewed"),
    "audit.checkpoint": _("Audit checkpoint signed"),
    "audit.signing_key_added": _("Signing key first used"),
    "audit.signing_key_rotated": _("Signing key rotated"),
    "audit.cosignature_added": _("Checkpoint cosigned by a witness"),
    "audit.bind_existing": _("Existing records bound into the audit chain"),
    "audit.guard_missing": _("Database guard found missing"),
    "user.deactivate": _("Account deactivated"),
    "user.create": _("Account created"),
    "user.change": _("Account changed"),
    "access.request": _("Access requested"),
    "access.approve": _("Access request approved"),
    "access.refuse": _("Access request refused"),
}

# The core records no reveal of its own; apps list theirs in their CHECKPOINT_AFTER.
CHECKPOINT_AFTER: frozenset[str] = frozenset()


@cache
def declared_actions() -> dict[str, str | Promise]:
    """Every declared action -> its label, from each installed app's ``audit_actions``.
    An action declared by two apps is a mistake: it says which."""
    found: dict[str, str | Promise] = {}
    owner: dict[str, str] = {}
    for config in apps.get_app_configs():
        if not module_has_submodule(config.module, "audit_actions"):
            continue
        declared = import_module(f"{config.name}.audit_actions").ACTIONS
        for code, label in declared.items():
            if code in owner:
                raise ValueError(
                    f"audit action {code!r} declared by {owner[code]} and {config.name}"
                )
            owner[code], found[code] = config.name, label
    return found


@cache
def checkpoint_after() -> frozenset[str]:
    """The actions after which a checkpoint is due at once (reveals, package builds):
    each app's ``CHECKPOINT_AFTER`` beside its ``ACTIONS``. Each must be declared."""
    found: set[str] = set(CHECKPOINT_AFTER)
    for config in apps.get_app_configs():
        if module_has_submodule(config.module, "audit_actions"):
            found |= set(
                getattr(import_module(f"{config.name}.audit_actions"), "CHECKPOINT_AFTER", ())
            )
    unknown = found - set(declared_actions())
    if unknown:
        raise ValueError(f"CHECKPOINT_AFTER names undeclared actions: {sorted(unknown)}")
    return frozenset(found)


def label(code: str) -> str | Promise | None:
    """The label of a declared action, or None for one no app declares."""
    return declared_actions().get(code)
