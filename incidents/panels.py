"""What incidents shows on the core's pages (casefiles/panels.py): the case's link to its
incidents."""

from django.urls import reverse
from django.utils.html import format_html
from django.utils.translation import gettext as _

from casefiles.panels import register_panel


def register() -> None:
    register_panel("case_links", case_link, order=40)


def case_link(context, case):
    return format_html(
        '<p><a href="{}">{}</a> · <a href="{}">{}</a> · <a href="{}">{}</a></p>',
        reverse("incidents:incident_list", args=[case.reference]),
        _("Incidents"),
        reverse("incidents:case_timeline", args=[case.reference]),
        _("Timeline"),
        reverse("incidents:case_map", args=[case.reference]),
        _("Map"),
    )
