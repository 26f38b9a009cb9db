"""An incident's whole state as JSON: what each version keeps, and its hash."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from .models import Act, Incident, Link, Perpetrator


def state_of(incident: Incident) -> dict[str, Any]:
    """The incident, its acts with their perpetrators and its links, named by codes and
    references (not database ids, which say nothing to a reader of the history)."""
    acts = list(
        Act.objects.filter(incident=incident)
        .select_related("victim", "act_type", "method")
        .order_by("pk")
    )
    perpetrators: dict[int, list[dict[str, Any]]] = {}
    for p in (
        Perpetrator.objects.filter(act__incident=incident)
        .select_related("unit", "person", "involvement")
        .order_by("pk")
    ):
        perpetrators.setdefault(p.act_id, []).append(
            {
                "unit": p.unit.code if p.unit else None,
                "person": p.person.code if p.person else None,
                "involvement": p.involvement.code,
            }
        )
    links: list[dict[str, Any]] = []
    for link in (
        Link.objects.filter(incident=incident).select_related("item", "element").order_by("pk")
    ):
        if link.item is not None:
            links.append({"item": link.item.reference})
        elif link.testimony_id is not None:
            links.append({"testimony": link.testimony_id})
        elif link.element is not None:
            links.append({"element": link.element.code})
    return {
        "reference": incident.reference,
        "title_en": incident.title_en,
        "title_ar": incident.title_ar,
        "description_en": incident.description_en,
        "description_ar": incident.description_ar,
        "precision": incident.precision,
        "starts_on": incident.starts_on.isoformat() if incident.starts_on else None,
        "ends_on": incident.ends_on.isoformat() if incident.ends_on else None,
        "place": incident.place.code if incident.place else None,
        "acts": [
            {
                "act": a.pk,
                "victim": a.victim.code,
                "act_type": a.act_type.code,
                "method": a.method.code if a.method else None,
                "perpetrators": perpetrators.get(a.pk, []),
            }
            for a in acts
        ],
        "links": links,
    }


def sha256_of(state: dict[str, Any]) -> str:
    blob = json.dumps(state, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(blob.encode()).hexdigest()
