"""The audit actions the search app records (collected by casefiles.audit_actions)."""

from django.utils.translation import gettext_lazy as _

ACTIONS = {
    "search.query": _("Searched"),
    "search.reindex": _("Search index rebuilt"),
}
