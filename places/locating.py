"""Photos placed by their GPS position: the nearest town, its governorate, the seeded
facility close by (decision 0017). Written at intake, inside its transaction (evidence
calls ``locate_within`` through its hook), and for items taken in before by
``services.locations.locate_case``."""

from __future__ import annotations

import logging
from decimal import Decimal

from django.db.models import F, Q

from casefiles.bulk import insert_rows

from . import geocode
from .models import ItemLocation, Kind, Place, town_key

log = logging.getLogger(__name__)

FACILITY_KM = 2.0  # a photo this close to a seeded facility is placed at it

Position = tuple[int, Decimal, Decimal]


def locate_within(case_id: int, positions: list[Position]) -> int:
    """Write the location of each item of ``positions``; the number written. Inside the
    caller's transaction: one query for the governorates and facilities, one insert. A
    missing geocoder leaves the items unlocated (intake goes on) and says so in the log."""
    if not positions:
        return 0
    try:
        towns = geocode.nearest_towns([(lat, lon) for _, lat, lon in positions])
    except geocode.GeocoderUnavailable as exc:
        log.warning("photos not located: %s", exc)
        return 0
    admin1 = {t.admin1 for t in towns if t is not None}
    places = list(
        Place.objects.filter(
            Q(kind=Kind.GOVERNORATE, geonames_admin1__in=admin1)
            | Q(kind=Kind.FACILITY, latitude__isnull=False, longitude__isnull=False)
        )
        .annotate(country=F("parent__code"))
        .order_by("code")
    )
    governorates = {
        (p.geonames_admin1, p.country): p.pk for p in places if p.kind == Kind.GOVERNORATE
    }
    facilities = [p for p in places if p.kind == Kind.FACILITY]
    rows = []
    for (item_id, lat, lon), town in zip(positions, towns, strict=True):
        if town is None:
            continue
        near = [
            (geocode.haversine_km(float(lat), float(lon), float(f.latitude), float(f.longitude)), f)
            for f in facilities
            if f.latitude is not None and f.longitude is not None
        ]
        km, facility = min(near, key=lambda pair: pair[0], default=(None, None))
        rows.append(
            dict(
                item_id=item_id,
                case_id=case_id,
                town=town.name[:200],
                town_key=town_key(town.name)[:200],
                town_km=Decimal(f"{min(town.distance_km, 999999):.2f}"),
                governorate_id=governorates.get((town.admin1, town.country_code)),
                facility_id=facility.pk
                if facility and km is not None and km <= FACILITY_KM
                else None,
            )
        )
    insert_rows(ItemLocation, rows, ignore_conflicts=True)
    return len(rows)
