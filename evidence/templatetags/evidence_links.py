"""Evidence shown on people and testimony pages (templates may link apps; code does not:
people's views never import evidence)."""

from django import template
from django.db.models import Q

from casefiles.access import statement_refusal

from ..models import EvidenceItem, Identification

register = template.Library()


@register.inclusion_tag("evidence/snippets/_person_evidence.html", takes_context=True)
def person_evidence(context, person, case):
    user = context["request"].user
    identifications = (
        Identification.objects.visible_to(user)
        .filter(case=case)
        .filter(Q(witness=person) | Q(identified=person))
        .select_related("item", "witness", "identified")
    )
    given = EvidenceItem.objects.visible_to(user).filter(case=case, source_person=person)
    return {
        "case": case,
        "person": person,
        "identifications": identifications,
        "given": given.only("reference", "title", "case_id").order_by("reference")[:100],
    }


@register.inclusion_tag("evidence/snippets/_testimony_attachments.html", takes_context=True)
def testimony_attachments(context, testimony, case):
    user = context["request"].user
    items = EvidenceItem.objects.visible_to(user).filter(case=case, testimony=testimony)
    # A recording or a scan of the statement is the statement: kept as it is
    # (``attachment_refusal``); the list shows their references and kinds only.
    withheld = statement_refusal(user, testimony.witness, case) is not None
    return {"case": case, "items": items.order_by("reference"), "withheld": withheld}
