"""Locating the photos of a case taken in before their positions were resolved at intake
(or while the geocoder was missing): one durable transaction, audited."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.db import transaction

from casefiles import audit
from casefiles.models import Case
from evidence.models import Provenance

from ..locating import locate_within
from ..models import ItemLocation

if TYPE_CHECKING:
    from django.contrib.auth.models import User as Account


def locate_case(*, actor: Account | None, case: Case) -> int:
    """The items of ``case`` with a position and no location yet, located; how many."""
    with transaction.atomic(durable=True):
        located = ItemLocation.objects.filter(case=case).values("item_id")
        positions = [
            (item_id, lat, lon)
            for item_id, lat, lon in Provenance.objects.filter(
                item__case=case, gps_latitude__isnull=False, gps_longitude__isnull=False
            )
            .exclude(item_id__in=located)
            .order_by("item_id")
            .values_list("item_id", "gps_latitude", "gps_longitude")
            if lat is not None and lon is not None
        ]
        written = locate_within(case.pk, positions)
        if written:
            audit.record(actor, "places.locate", case=case, located=written)
    return written
