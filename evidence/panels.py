"""What evidence shows on other apps' pages, as panels of the core (casefiles/panels.py):
the case's link to its evidence, and the evidence of a person and of a testimony. People's
code and templates never name evidence; ``EvidenceConfig.ready()`` registers these."""

from django.db.models import Q
from django.urls import reverse
from django.utils.html import format_html
from django.utils.translation import gettext as _

from casefiles.panels import register_panel, render_snippet

from . import reads
from .models import Identification


def register() -> None:
    register_panel("case_links", case_link, order=10)
    register_panel("person", person_evidence)
    register_panel("testimony", testimony_attachments)


def case_link(context, case):
    url = reverse("evidence:gallery", args=[case.reference])
    return format_html('<p><a href="{}">{}</a></p>', url, _("Evidence"))


def person_evidence(context, person, case):
    user = context["request"].user
    # A graphic item is labelled so, unless withheld (its label would tell of it).
    identifications = (
        Identification.objects.visible_to(user)
        .filter(case=case)
        .filter(Q(witness=person) | Q(identified=person))
        .select_related("item", "witness", "identified")
        .annotate(item_withheld=reads.withheld(user, case, "item__testimony_id"))
    )
    given = reads.listed_for(user, case).filter(source_person=person)
    return render_snippet(
        context,
        "evidence/snippets/_person_evidence.html",
        {
            "case": case,
            "person": person,
            "identifications": identifications,
            "given": given.only("reference", "title", "case_id", "is_graphic").order_by(
                "reference"
            )[:100],
        },
    )


def testimony_attachments(context, testimony, case):
    user = context["request"].user
    # A recording or a scan of the statement is the statement: kept as it is
    # (``attachment_refusal``, here for the whole list at once); a withheld item shows
    # its reference and kind only.
    items = reads.listed_for(user, case).filter(testimony=testimony)
    return render_snippet(
        context,
        "evidence/snippets/_testimony_attachments.html",
        {"case": case, "items": items.order_by("reference")},
    )
