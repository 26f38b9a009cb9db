"""The audit actions the people app records (collected by casefiles.audit_actions)."""

from django.utils.translation import gettext_lazy as _

ACTIONS = {
    "people.register": _("Person registered"),
    "people.add_role": _("Role added to a person"),
    "people.relate": _("Relation between people recorded"),
    "people.view": _("Person viewed"),
    "people.reveal_identity": _("Identity revealed"),
    "people.reveal_failed": _("Identity reveal failed: a sealed value does not open"),
    "people.names": _("Names changed"),
    "people.protection_change": _("Protection level changed"),
    "people.protection_change_refused": _("Protection level change refused"),
    "people.reveal_refused": _("Identity reveal refused by protection level"),
    "people.name_lookup": _("Name looked up"),
    "people.rotate_keys": _("Field encryption keys rotated"),
    "people.reseal": _("Sealed fields re-encrypted under the current key"),
    "people.export": _("People exported"),
    "people.victim_status": _("Victim status changed"),
    "consent.record": _("Consent recorded"),
    "consent.withdraw": _("Consent withdrawn"),
    "testimony.create": _("Testimony logged"),
    "testimony.view": _("Testimony viewed"),
    "testimony.list": _("Testimonies listed"),
    "testimony.revise": _("Testimony revised"),
    # Review steps before review moved to legal (its "review.*" actions since).
    "testimony.submit": _("Testimony submitted"),
    "testimony.approve": _("Testimony approved"),
    "testimony.return": _("Testimony returned"),
}

# A checkpoint is made as soon as this commits (an identity revealed): decision 0025.
CHECKPOINT_AFTER = frozenset({"people.reveal_identity"})
