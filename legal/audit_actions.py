"""The audit actions the legal app records (collected by casefiles.audit_actions)."""

from django.utils.translation import gettext_lazy as _

ACTIONS = {
    "review.submit": _("Submitted for review"),
    "review.approve": _("Approved in review"),
    "review.return": _("Returned in review"),
    "review.reject": _("Rejected in review"),
    "review.reopen": _("Back to review: changed after approval"),
}
ACTIONS.update(
    {
        "legal.link": _("Linked to a legal element"),
        "legal.link_confirm": _("Link to a legal element confirmed"),
        "legal.link_withdraw": _("Link to a legal element withdrawn"),
        "legal.assess": _("Assessment recorded"),
        "legal.matrix": _("Evidence matrix viewed"),
        "legal.matrix_export": _("Evidence matrix exported"),
    }
)
ACTIONS.update(
    {
        "legal.element_add": _("Legal element added to the catalogue"),
        "legal.element_retire": _("Legal elements retired"),
    }
)
ACTIONS["legal.comment"] = _("Comment added")
ACTIONS.update(
    {
        "legal.workspace": _("Review workspace viewed"),
        "legal.search_save": _("Search saved"),
        "legal.search_delete": _("Saved search deleted"),
        "legal.bulk_start": _("Bulk action confirmed"),
        "legal.bulk_done": _("Bulk action finished"),
        "legal.bulk_failed": _("Bulk action stopped by an error"),
        "legal.bulk_assign": _("Reviewer assigned in bulk"),
        "legal.bulk_tag_add": _("Tag added in bulk"),
        "legal.bulk_tag_remove": _("Tag removed in bulk"),
        "legal.bulk_sensitivity": _("Sensitivity set in bulk"),
        "legal.bulk_link": _("Linked to a legal element in bulk"),
        "review.bulk_submit": _("Submitted for review in bulk"),
    }
)
