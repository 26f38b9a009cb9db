"""Evidence shown on people and testimony pages (templates may link apps; code does not:
people's views never import evidence)."""

from django import template
from django.db.models import BooleanField, ExpressionWrapper, Q

from casefiles.access import withheld_testimonies

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
    # A recording or a scan of the statement is the statement: kept as it is
    # (``attachment_refusal``, here for the whole list at once); a withheld item shows
    # its reference and kind only.
    items = (
        EvidenceItem.objects.visible_to(user)
        .filter(case=case, testimony=testimony)
        .annotate(
            withheld=ExpressionWrapper(
                Q(testimony_id__in=withheld_testimonies(user, case)),
                output_field=BooleanField(),
            )
        )
    )
    return {"case": case, "items": items.order_by("reference")}
