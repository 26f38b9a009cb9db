"""What incidents shows on the core's pages (casefiles/panels.py): the case's link to its
incidents."""

from django.urls import reverse
from django.utils.html import format_html
from django.utils.translation import gettext as _

from casefiles.panels import register_panel


def register() -> None:
    register_panel("case_links", case_link, order=40)


def case_link(context, case):
    url = reverse("incidents:incident_list", args=[case.reference])
    return format_html('<p><a href="{}">{}</a></p>', url, _("Incidents"))
