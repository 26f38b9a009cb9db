"""What the missing app shows on the core's pages (casefiles/panels.py): the case's link
to its missing people."""

from django.urls import reverse
from django.utils.html import format_html
from django.utils.translation import gettext as _

from casefiles.panels import register_panel


def register() -> None:
    register_panel("case_links", case_link, order=45)


def case_link(context, case):
    return format_html(
        '<p><a href="{}" id="case-missing">{}</a></p>',
        reverse("missing:list", args=[case.reference]),
        _("The missing"),
    )
