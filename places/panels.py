"""What places shows on other apps' pages, as panels of the core (casefiles/panels.py):
an evidence item's nearest town, worked out offline from its GPS position, with its
governorate and the known facilities close by."""

from __future__ import annotations

from django.db.models import Q

from casefiles.panels import register_panel, render_snippet

from . import geocode
from .models import Kind, Place

NEARBY_KM = 5.0  # facilities this close to a photo's position are named beside it


def register() -> None:
    register_panel("item", item_place, order=5)


def item_place(context, item, case) -> str:
    """Nothing (and no query) for an item without a position; otherwise one query: the
    governorate GeoNames names and the facilities that have a position."""
    provenance = getattr(item, "provenance", None)
    if provenance is None or provenance.gps_latitude is None or provenance.gps_longitude is None:
        return ""
    try:
        town = geocode.nearest_town(provenance.gps_latitude, provenance.gps_longitude)
    except geocode.GeocoderUnavailable:
        town = None
    if town is None:
        return ""
    candidates = Place.objects.filter(
        Q(kind=Kind.GOVERNORATE, geonames_admin1=town.admin1, parent__code=town.country_code)
        | Q(kind=Kind.FACILITY, latitude__isnull=False, longitude__isnull=False)
    ).order_by("code")
    governorate = None
    nearby = []
    lat, lon = float(provenance.gps_latitude), float(provenance.gps_longitude)
    for place in candidates:
        if place.kind == Kind.GOVERNORATE:
            governorate = place
            continue
        km = geocode.haversine_km(lat, lon, float(place.latitude or 0), float(place.longitude or 0))
        if km <= NEARBY_KM:
            nearby.append((km, place))
    nearby.sort(key=lambda pair: pair[0])
    return render_snippet(
        context,
        "places/snippets/_item_place.html",
        {"town": town, "governorate": governorate, "nearby": nearby},
    )
