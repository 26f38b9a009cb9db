"""The audit actions the disclosure app records (collected by casefiles.audit_actions)."""

from django.utils.translation import gettext_lazy as _

ACTIONS = {
    "disclosure.request": _("Disclosure package requested"),
    "disclosure.approve": _("Disclosure package approved"),
    "disclosure.refuse": _("Disclosure package refused"),
    "disclosure.withdraw": _("Disclosure package withdrawn"),
    "disclosure.build_start": _("Disclosure package build started"),
    "disclosure.build": _("Disclosure package built"),
    "disclosure.build_failed": _("Disclosure package build failed"),
    "disclosure.download": _("Disclosure package downloaded"),
    "disclosure.report": _("Custody report of a package downloaded"),
    "disclosure.item_report": _("Custody report of an item made"),
    "disclosure.redact": _("Redacted copy of an item made"),
    "disclosure.redaction_view": _("Redacted copy of an item viewed"),
}

# A checkpoint is made as soon as this commits (a package built): decision 0025.
CHECKPOINT_AFTER = frozenset({"disclosure.build"})
