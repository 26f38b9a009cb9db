"""The audit actions the places app records (collected by casefiles.audit_actions)."""

from django.utils.translation import gettext_lazy as _

ACTIONS = {
    "places.locate": _("Photos placed by their GPS positions"),
}
