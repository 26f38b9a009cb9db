"""A case's timeline, drawn on the server as SVG (decision 0017): incidents as spans
from their first to their last possible day, photos by the day their camera dates them
(one mark per day, with how many), testimonies by the day they were taken, and custody
events recorded by hand (intake's own acquisitions are the photos). Each mark is a link
to its record (a day of photos: the gallery filtered to that day). In Arabic the time
axis runs right to left, as the page does.

Filters: which kinds of mark; a place (incidents there or within it, photos the GPS
places there); a person by code (incidents where they are a victim or perpetrator,
testimonies they gave). Every read goes through ``visible_to``; photos attached to a
statement the viewer may not read are left out, as in the gallery.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta
from typing import TYPE_CHECKING

from django.db.models import Count, Q
from django.urls import reverse
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import gettext as _

from casefiles.models import Case
from evidence.models import CustodyEvent, EvidenceItem
from people.models import Testimony
from people.protection import withheld_testimonies
from places.models import ItemLocation, Place

from .filters import PLACE_DEPTH
from .models import Act, Incident, Perpetrator

if TYPE_CHECKING:
    from casefiles.access import User

KINDS = ("incident", "photo", "testimony", "custody")
WIDTH, LANE, TOP, MARGIN = 960, 46, 30, 150
MAX_MARKS = 2000  # per kind: a day of photos is one mark, so this is days


@dataclass(frozen=True)
class Mark:
    kind: str
    start: date
    end: date
    label: str
    url: str


def _incidents(user: User | None, case: Case, place: Place | None, person: str) -> list[Mark]:
    found = Incident.objects.visible_to(user).filter(case=case, starts_on__isnull=False)
    if place is not None:
        around = Q(place=place)
        for depth in range(1, PLACE_DEPTH + 1):
            around |= Q(**{"place" + "__parent" * depth: place})
        found = found.filter(around)
    if person:
        as_victim = Act.objects.filter(victim__code__iexact=person).values("incident_id")
        as_perpetrator = Perpetrator.objects.filter(person__code__iexact=person).values(
            "act__incident_id"
        )
        found = found.filter(Q(pk__in=as_victim) | Q(pk__in=as_perpetrator))
    return [
        Mark(
            "incident",
            i.starts_on,
            i.ends_on or i.starts_on,
            f"{i.reference} · {i.when}",
            reverse("incidents:incident_detail", args=[case.reference, i.reference]),
        )
        for i in found.order_by("starts_on", "reference").only(
            "reference", "starts_on", "ends_on", "precision"
        )[:MAX_MARKS]
        if i.starts_on is not None
    ]


def _photos(user: User | None, case: Case, place: Place | None) -> list[Mark]:
    items = (
        EvidenceItem.objects.visible_to(user)
        .filter(case=case, provenance__taken_date__isnull=False)
        .exclude(testimony_id__in=withheld_testimonies(user, case))
    )
    if place is not None:
        located = ItemLocation.objects.filter(case=case).within(place)
        items = items.filter(pk__in=located.values("item_id"))
    days = (
        items.values("provenance__taken_date")
        .annotate(n=Count("pk"))
        .order_by("provenance__taken_date")[:MAX_MARKS]
    )
    gallery = reverse("evidence:gallery", args=[case.reference])
    marks = []
    for row in days:
        day = row["provenance__taken_date"]
        if day is None:
            continue
        marks.append(
            Mark(
                "photo",
                day,
                day,
                _("%(count)s photos taken on %(day)s") % {"count": row["n"], "day": day},
                f"{gallery}?taken_after={day}&taken_before={day}",
            )
        )
    return marks


def _testimonies(user: User | None, case: Case, person: str) -> list[Mark]:
    found = Testimony.objects.visible_to(user).filter(case=case)
    if person:
        found = found.filter(witness__code__iexact=person)
    return [
        Mark(
            "testimony",
            t.taken_at.date(),
            t.taken_at.date(),
            f"T-{t.pk:04d} · {t.taken_at.date()}",
            reverse("people:testimony_detail", args=[case.reference, t.pk]),
        )
        for t in found.order_by("taken_at", "pk").only("taken_at")[:MAX_MARKS]
    ]


def _custody(user: User | None, case: Case) -> list[Mark]:
    events = (
        CustodyEvent.objects.visible_to(user)
        .filter(case=case, item__isnull=False)
        .exclude(action=CustodyEvent.Action.ACQUIRED)
        .exclude(item__testimony_id__in=withheld_testimonies(user, case))
        .select_related("item")
        .order_by("at", "pk")[:MAX_MARKS]
    )
    return [
        Mark(
            "custody",
            e.at.date(),
            e.at.date(),
            f"{e.item.reference} · {e.get_action_display()} · {e.at.date()}",
            e.item.get_absolute_url() + "#custody",
        )
        for e in events
        if e.item is not None
    ]


def marks_of(
    user: User | None, case: Case, kinds: set[str], place: Place | None, person: str
) -> list[Mark]:
    marks: list[Mark] = []
    if "incident" in kinds:
        marks += _incidents(user, case, place, person)
    if "photo" in kinds and not person:
        marks += _photos(user, case, place)
    if "testimony" in kinds and place is None:
        marks += _testimonies(user, case, person)
    if "custody" in kinds and place is None and not person:
        marks += _custody(user, case)
    return marks


def _ticks(first: date, last: date) -> list[date]:
    """Years, or months when the span is under two years."""
    if (last - first).days < 730:
        ticks, day = [], first.replace(day=1)
        while day <= last:
            ticks.append(day)
            day = (day + timedelta(days=32)).replace(day=1)
        return ticks
    return [date(y, 1, 1) for y in range(first.year, last.year + 1)]


def draw(marks: list[Mark], *, rtl: bool) -> SafeString:
    """The SVG: one lane per kind, the dates along the width (from the right in Arabic)."""
    lanes = {
        "incident": _("Incidents"),
        "photo": _("Photos (date taken)"),
        "testimony": _("Testimonies"),
        "custody": _("Custody events"),
    }
    height = TOP + LANE * len(KINDS) + 30
    if not marks:
        return mark_safe("")
    first = min(m.start for m in marks)
    last = max(m.end for m in marks)
    first, last = first - timedelta(days=15), last + timedelta(days=15)
    span = max((last - first).days, 1)
    plot = WIDTH - MARGIN - 20

    def x(day: date) -> float:
        offset = plot * (day - first).days / span
        return round(WIDTH - MARGIN - offset if rtl else MARGIN + offset, 1)

    label_x = WIDTH - 10 if rtl else 10
    lane_from, lane_to = (20, WIDTH - MARGIN) if rtl else (MARGIN, WIDTH - 20)
    anchor = "end" if rtl else "start"
    name = escape(_("Timeline of the case"))  # outside the f-string, where makemessages sees it
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="timeline" role="img" '
        f'viewBox="0 0 {WIDTH} {height}" width="100%" direction="{"rtl" if rtl else "ltr"}" '
        f'aria-label="{name}">'
    ]
    for n, kind in enumerate(KINDS):
        lane_top = TOP + LANE * n
        parts.append(
            f'<text x="{label_x}" y="{lane_top + LANE / 2 + 4}" text-anchor="{anchor}" '
            f'class="lane">{escape(lanes[kind])}</text>'
            f'<line x1="{lane_from}" x2="{lane_to}" '
            f'y1="{lane_top + LANE / 2}" y2="{lane_top + LANE / 2}" class="lane-line"/>'
        )
    axis = TOP + LANE * len(KINDS) + 12
    for tick in _ticks(first, last):
        if first <= tick <= last:
            label = f"{tick:%Y}" if tick.month == 1 else f"{tick:%Y-%m}"
            parts.append(
                f'<line x1="{x(tick)}" x2="{x(tick)}" y1="{TOP}" y2="{axis - 10}" class="tick"/>'
                f'<text x="{x(tick)}" y="{axis + 4}" text-anchor="middle" class="tick" '
                f'direction="ltr">{label}</text>'
            )
    for mark in marks:
        y = TOP + LANE * KINDS.index(mark.kind) + LANE / 2
        left, right = sorted((x(mark.start), x(mark.end)))
        title = f"<title>{escape(mark.label)}</title>"
        if mark.kind == "incident" and right - left >= 4:
            shape = (
                f'<rect x="{left}" y="{y - 7}" width="{round(right - left, 1)}" height="14" '
                f'rx="3" class="mark {mark.kind}"/>'
            )
        else:
            shape = f'<circle cx="{left}" cy="{y}" r="6" class="mark {mark.kind}"/>'
        parts.append(f'<a href="{escape(mark.url)}" class="mark">{title}{shape}</a>')
    parts.append("</svg>")
    return mark_safe("".join(parts))  # noqa: S308  (every text in it escaped above)
