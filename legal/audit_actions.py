"""The audit actions the legal app records (collected by casefiles.audit_actions)."""

from django.utils.translation import gettext_lazy as _

ACTIONS = {
    "review.submit": _("Submitted for review"),
    "review.approve": _("Approved in review"),
    "review.return": _("Returned in review"),
    "review.reject": _("Rejected in review"),
    "review.reopen": _("Back to review: changed after approval"),
}
