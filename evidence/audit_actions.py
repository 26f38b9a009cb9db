"""The audit actions the evidence app records (collected by casefiles.audit_actions)."""

from django.utils.translation import gettext_lazy as _

ACTIONS = {
    "evidence.batch_open": _("Intake batch opened"),
    "evidence.batch_name_encoding": _("File-name encoding of a batch changed"),
    "evidence.batch_done": _("Intake batch finished"),
    "evidence.batch_interrupted": _("Intake batch interrupted by an error"),
    "evidence.intake": _("Evidence taken in"),
    "evidence.gallery": _("Evidence gallery viewed"),
    "evidence.view": _("Evidence item viewed"),
    "evidence.preview": _("Evidence image viewed"),
    "evidence.download": _("Original downloaded"),
    "evidence.download_refused": _("Download refused: the original failed its check"),
    "evidence.withheld": _("Evidence withheld: attached to a protected statement"),
    "evidence.custody": _("Custody event recorded"),
    "evidence.update": _("Evidence description changed"),
    "evidence.identification": _("Identification recorded"),
    "evidence.graphic_mark": _("Evidence marked graphic"),
    "evidence.graphic_unmark": _("Evidence no longer marked graphic"),
    "evidence.graphic_reveal": _("Graphic image revealed"),
    "evidence.fixity_start": _("Fixity check started"),
    "evidence.fixity": _("Fixity check run"),
    "evidence.fixity_results": _("Fixity results recorded"),
    "evidence.export_metadata": _("Evidence metadata exported"),
    "evidence.regroup": _("Near-duplicate groups rebuilt"),
}

# A checkpoint is made as soon as this commits (a graphic image revealed): decision 0025.
CHECKPOINT_AFTER = frozenset({"evidence.graphic_reveal"})
