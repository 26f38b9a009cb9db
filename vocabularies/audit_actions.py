"""The audit actions the vocabularies app records (collected by casefiles.audit_actions)."""

from django.utils.translation import gettext_lazy as _

ACTIONS = {
    "vocabulary.term_add": _("Vocabulary term added"),
    "vocabulary.term_relabel": _("Vocabulary term relabelled"),
    "vocabulary.term_retire": _("Vocabulary terms retired"),
}
