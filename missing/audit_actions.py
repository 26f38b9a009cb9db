"""The audit actions the missing app records (collected by casefiles.audit_actions)."""

from django.utils.translation import gettext_lazy as _

ACTIONS = {
    "missing.profile_save": _("Antemortem profile recorded"),
    "missing.profile_reveal": _("Antemortem profile revealed"),
    "missing.profile_reveal_failed": _(
        "Antemortem profile reveal failed: a sealed value does not open"
    ),
    # Before a victim had one status (decision 0021); its changes are "people.victim_status".
    "missing.status": _("Status of a missing person changed"),
    "missing.session_prepare": _("Family identification session prepared"),
    "missing.photo_shown": _("Photo shown in a family identification session"),
    "missing.identified": _("Identification recorded in a family session"),
    "missing.list": _("Missing people listed"),
}

# A checkpoint is made as soon as this commits (an antemortem profile revealed): decision 0025.
CHECKPOINT_AFTER = frozenset({"missing.profile_reveal"})
