"""A case's map, drawn on the server as SVG (decision 0017, "Map"): the outlines of
Syria and its neighbours (Natural Earth, shipped in places/boundaries/levant.json, never
fetched), the governorates as labelled points from the gazetteer (no registry package
ships their boundaries), and over them the case's marks: each incident at its place
(or the nearest place above it with coordinates), each facility where photos were
taken, and the photos' positions grouped by nearest town. Each mark is a link: an
incident to its record, a governorate or facility to the gallery filtered to it, a town
to the gallery filtered by that town.

The projection is equirectangular with longitude scaled by cos(35°), true enough for
Syria's size. In Arabic the labels read right to left and sit on the other side of
their points; the map itself is not mirrored (north stays up, east stays right).
Every read goes through ``visible_to``; photos of a statement the viewer may not read
are left out, as in the gallery.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlencode

from django.db.models import Avg, Count
from django.urls import reverse
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import get_language
from django.utils.translation import gettext as _

import places
from casefiles.models import Case
from evidence.models import EvidenceItem
from people.protection import withheld_testimonies
from places.models import ItemLocation, Kind, Place

from .models import Incident

if TYPE_CHECKING:
    from casefiles.access import User

BOUNDARIES = Path(places.__file__).resolve().parent / "boundaries" / "levant.json"
# The frame: Syria and a margin of its neighbours (degrees).
WEST, EAST, SOUTH, NORTH = 35.3, 42.6, 32.1, 37.6
WIDTH = 960
SCALE_X = math.cos(math.radians(35))
HEIGHT = round(WIDTH * (NORTH - SOUTH) / ((EAST - WEST) * SCALE_X))
MAX_MARKS = 2000


@dataclass(frozen=True)
class Mark:
    kind: str  # "governorate", "facility", "incident" or "town"
    lat: float
    lon: float
    label: str
    url: str
    count: int = 0


def xy(lat: float, lon: float) -> tuple[float, float]:
    x = (lon - WEST) / (EAST - WEST) * WIDTH
    y = (NORTH - lat) / (NORTH - SOUTH) * HEIGHT
    return round(x, 1), round(y, 1)


@cache
def _outlines() -> list[tuple[str, str]]:
    """Each country's code and SVG path, projected once per process."""
    data = json.loads(BOUNDARIES.read_text())
    paths = []
    for country in data["countries"]:
        d = " ".join(
            "M" + "L".join("{},{}".format(*xy(lat, lon)) for lon, lat in ring) + "Z"
            for ring in country["rings"]
        )
        paths.append((country["code"], d))
    return paths


def _positioned(place: Place | None) -> Place | None:
    while place is not None and not place.has_position:
        place = place.parent
    return place


def marks_of(user: User | None, case: Case) -> list[Mark]:
    language = get_language()
    gallery = reverse("evidence:gallery", args=[case.reference])
    items = EvidenceItem.objects.visible_to(user).filter(case=case)
    items = items.exclude(testimony_id__in=withheld_testimonies(user, case))
    located = ItemLocation.objects.filter(case=case, item__in=items)
    per_governorate = dict(
        located.filter(governorate__isnull=False)
        .values_list("governorate")
        .annotate(n=Count("pk"))
        .order_by()
    )
    per_facility = dict(
        located.filter(facility__isnull=False)
        .values_list("facility")
        .annotate(n=Count("pk"))
        .order_by()
    )
    marks: list[Mark] = []
    shown = Place.objects.filter(kind=Kind.GOVERNORATE) | Place.objects.filter(
        pk__in=list(per_facility)
    )
    for place in shown.filter(latitude__isnull=False, longitude__isnull=False).order_by("code"):
        n = (per_governorate if place.kind == Kind.GOVERNORATE else per_facility).get(place.pk, 0)
        marks.append(
            Mark(
                "governorate" if place.kind == Kind.GOVERNORATE else "facility",
                float(place.latitude or 0),
                float(place.longitude or 0),
                place.name(language),
                gallery + "?" + urlencode({"place": place.pk}),
                n,
            )
        )
    incidents = (
        Incident.objects.visible_to(user)
        .filter(case=case, place__isnull=False)
        .select_related("place__parent__parent__parent__parent")
        .order_by("reference")[:MAX_MARKS]
    )
    for incident in incidents:
        where = incident.place
        at = _positioned(where)
        if where is None or at is None or at.latitude is None or at.longitude is None:
            continue
        marks.append(
            Mark(
                "incident",
                float(at.latitude),
                float(at.longitude),
                f"{incident.reference} · {incident.when} · {where.name(language)}",
                reverse("incidents:incident_detail", args=[case.reference, incident.reference]),
            )
        )
    towns = (
        located.filter(item__provenance__gps_latitude__isnull=False)
        .values("town")
        .annotate(
            n=Count("pk"),
            lat=Avg("item__provenance__gps_latitude"),
            lon=Avg("item__provenance__gps_longitude"),
        )
        .order_by("town")[:MAX_MARKS]
    )
    for row in towns:
        marks.append(
            Mark(
                "town",
                float(row["lat"]),
                float(row["lon"]),
                _("%(count)s photos taken near %(town)s")
                % {"count": row["n"], "town": row["town"]},
                gallery + "?" + urlencode({"town": row["town"]}),
                row["n"],
            )
        )
    return marks


def _label_sides(governorates: list[Mark], *, rtl: bool) -> dict[Mark, int]:
    """Which side of its point each governorate's label goes (1 right, -1 left): the
    side the page reads towards, unless another governorate's point lies close on that
    side (Damascus and Rif Dimashq), then the other."""
    points = {m: xy(m.lat, m.lon) for m in governorates}
    sides = {}
    for mark, (x, y) in points.items():
        side = -1 if rtl else 1
        crowded = any(
            0 < (ox - x) * side < 90 and abs(oy - y) < 16
            for other, (ox, oy) in points.items()
            if other is not mark
        )
        sides[mark] = -side if crowded else side
    return sides


def draw(marks: list[Mark], *, rtl: bool) -> SafeString:
    """The SVG: outlines, then governorates, facilities, photo towns and incidents on top.
    A named group of links, not an image (links inside an image are interactive content
    nested in presentational content: axe-core's ``nested-interactive``)."""
    name = escape(_("Map of the case"))
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="casemap" role="group" '
        f'viewBox="0 0 {WIDTH} {HEIGHT}" width="100%" direction="{"rtl" if rtl else "ltr"}" '
        f'aria-label="{name}">'
    ]
    for code, d in _outlines():
        parts.append(f'<path d="{d}" class="country{" home" if code == "SY" else ""}"/>')
    order = ("governorate", "facility", "town", "incident")
    sides = _label_sides([m for m in marks if m.kind == "governorate"], rtl=rtl)
    for mark in sorted(marks, key=lambda m: order.index(m.kind)):
        x, y = xy(mark.lat, mark.lon)
        title = f"<title>{escape(mark.label)}</title>"
        if mark.kind == "incident":
            shape = (
                f'<path d="M{x},{y - 8}L{x + 7},{y + 5}L{x - 7},{y + 5}Z" class="mark incident"/>'
            )
        else:
            r = 5 if mark.kind == "governorate" else 4 + min(8, round(math.sqrt(mark.count)))
            shape = f'<circle cx="{x}" cy="{y}" r="{r}" class="mark {mark.kind}"/>'
        text = ""
        if mark.kind == "governorate":
            side = sides[mark]
            anchor = "start" if (side > 0) != rtl else "end"
            text = (
                f'<text x="{x + 9 * side}" y="{y + 4}" text-anchor="{anchor}" '
                f'class="label">{escape(mark.label)}</text>'
            )
        parts.append(
            f'<a href="{escape(mark.url)}" class="mark {mark.kind}">{title}{shape}{text}</a>'
        )
    parts.append("</svg>")
    return mark_safe("".join(parts))  # noqa: S308  (every text in it escaped above)
