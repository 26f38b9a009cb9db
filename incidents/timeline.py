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

from collections import defaultdict
from dataclasses import dataclass, replace
from datetime import date, timedelta
from itertools import pairwise
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
PAD = 15  # days of air each side of a run of records
# A stretch with no record is cut out of the axis when it is longer than a year and
# than a third of the whole: the day of intake, years after the events, would
# otherwise squash the events into a few pixels.
CUT_DAYS, CUT_SHARE, CUT_WIDTH = 365, 1 / 3, 28
CHAR_WIDTH, TICK_GAP = 7.5, 10  # an axis label's digits at 12 px, and air between labels
MAX_MARKS = 2000  # per kind: a day of photos is one mark, so this is days


@dataclass(frozen=True)
class Mark:
    kind: str
    start: date
    end: date
    label: str
    url: str
    count: int = 1  # a day of photos is one mark of many


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
                row["n"],
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


def _same_day(marks: list[Mark], case: Case) -> list[Mark]:
    """Marks of one kind on one day become one mark with their count, linking to the
    list of them (a batch of sixty custody events, or a day's testimonies, is one dot
    that says how many, not sixty dots drawn over each other)."""
    days: dict[tuple[str, date, date], list[Mark]] = defaultdict(list)
    for mark in marks:
        days[mark.kind, mark.start, mark.end].append(mark)
    out = []
    for (kind, start, end), same in days.items():
        if len(same) == 1 or kind == "photo":  # a day of photos is already one mark
            out += same
            continue
        count = sum(m.count for m in same)
        if len({m.url for m in same}) == 1:
            url = same[0].url
        elif kind == "testimony":
            url = reverse("people:testimony_list", args=[case.reference])
            url += f"?taken_after={start}&taken_before={start}"
        elif kind == "custody":
            url = reverse("evidence:gallery", args=[case.reference]) + f"?custody_on={start}"
        else:
            url = reverse("incidents:incident_list", args=[case.reference])
            url += f"?when_after={start}&when_before={end}"
        label = {
            "incident": _("%(count)s incidents on %(day)s"),
            "testimony": _("%(count)s testimonies taken on %(day)s"),
            "custody": _("%(count)s custody events on %(day)s"),
        }[kind] % {"count": count, "day": start if start == end else f"{start}/{end}"}
        out.append(replace(same[0], label=label, url=url, count=count))
    return out


def _runs(marks: list[Mark]) -> list[tuple[date, date]]:
    """The stretches of the axis that are drawn: the records' days with air either
    side, apart where nothing happens for long (see ``CUT_DAYS``)."""
    spans = sorted((m.start - timedelta(days=PAD), m.end + timedelta(days=PAD)) for m in marks)
    whole = (max(end for _, end in spans) - spans[0][0]).days
    runs = [spans[0]]
    for start, end in spans[1:]:
        gap = (start - runs[-1][1]).days
        if gap > CUT_DAYS and gap > whole * CUT_SHARE:
            runs.append((start, end))
        else:
            runs[-1] = (runs[-1][0], max(runs[-1][1], end))
    return runs


class Axis:
    """Days to x, over runs of days laid side by side with a narrow cut between them;
    each run is as wide as its share of the days, but never narrower than a share of
    the width fair to a run of its own."""

    def __init__(self, runs: list[tuple[date, date]], *, rtl: bool) -> None:
        self.runs, self.rtl = runs, rtl
        plot = WIDTH - MARGIN - 20 - CUT_WIDTH * (len(runs) - 1)
        days = [max((end - start).days, 1) for start, end in runs]
        weights = [max(d, sum(days) / (4 * len(runs))) for d in days]
        self.widths = [plot * w / sum(weights) for w in weights]
        self.offsets = [sum(self.widths[:n]) + CUT_WIDTH * n for n in range(len(runs))]

    def _place(self, offset: float) -> float:
        return round(WIDTH - MARGIN - offset if self.rtl else MARGIN + offset, 1)

    def x(self, day: date) -> float:
        for (start, end), width, offset in zip(self.runs, self.widths, self.offsets, strict=True):
            if day <= end:
                share = max(min((day - start).days / max((end - start).days, 1), 1), 0)
                return self._place(offset + width * share)
        return self._place(self.offsets[-1] + self.widths[-1])

    def cuts(self) -> list[tuple[float, date, date]]:
        """Where each cut is drawn, with the days it leaves out."""
        return [
            (self._place(offset - CUT_WIDTH / 2), before[1], after[0])
            for (before, after), offset in zip(pairwise(self.runs), self.offsets[1:], strict=True)
        ]

    def ticks(self) -> list[tuple[float, str]]:
        """Labelled ticks that never overlap: months, or every 2, 3 or 6 months, or
        years (every 1, 2, 5 or 10) as the room allows, in each run; then any tick too
        close to the last one kept is left out."""
        found: list[tuple[float, str]] = []
        for (start, end), width in zip(self.runs, self.widths, strict=True):
            per_month = width * 30.44 / max((end - start).days, 1)
            room = CHAR_WIDTH * 7 + TICK_GAP  # "2013-08"
            step = next((s for s in (1, 2, 3, 6) if per_month * s >= room), 0)
            if step:
                day = start.replace(day=1)
                while day <= end:
                    if day >= start and (day.month - 1) % step == 0:
                        label = f"{day:%Y-%m}" if day.month > 1 else str(day.year)
                        found.append((self.x(day), label))
                    day = (day + timedelta(days=32)).replace(day=1)
                continue
            room = CHAR_WIDTH * 4 + TICK_GAP
            years = next((s for s in (1, 2, 5, 10, 20, 50) if per_month * 12 * s >= room), 100)
            for year in range(start.year + 1, end.year + 1):
                if year % years == 0:
                    found.append((self.x(date(year, 1, 1)), str(year)))
        kept: list[tuple[float, str]] = []
        for at, label in sorted(found):
            if kept:
                last_at, last = kept[-1]
                room = CHAR_WIDTH * (len(label) + len(last)) / 2 + TICK_GAP
                if at - last_at < room:
                    continue
            kept.append((at, label))
        return kept


def draw(marks: list[Mark], case: Case, *, rtl: bool) -> SafeString:
    """The SVG: one lane per kind, the dates along the width (from the right in Arabic),
    long empty stretches cut out, a day's marks of one kind drawn as one with a count.

    A group of links with a name, not an image: an image's content is presentational,
    and links inside it would be interactive content nested in it (axe-core's
    ``nested-interactive``)."""
    lanes = {
        "incident": _("Incidents"),
        "photo": _("Photos (date taken)"),
        "testimony": _("Testimonies"),
        "custody": _("Custody events"),
    }
    height = TOP + LANE * len(KINDS) + 30
    if not marks:
        return mark_safe("")
    marks = _same_day(marks, case)
    axis = Axis(_runs(marks), rtl=rtl)
    x = axis.x
    label_x = WIDTH - 10 if rtl else 10
    lane_from, lane_to = (20, WIDTH - MARGIN) if rtl else (MARGIN, WIDTH - 20)
    name = escape(_("Timeline of the case"))  # outside the f-string, where makemessages sees it
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="timeline" role="group" '
        f'viewBox="0 0 {WIDTH} {height}" width="100%" direction="{"rtl" if rtl else "ltr"}" '
        f'aria-label="{name}">'
    ]
    for n, kind in enumerate(KINDS):
        lane_top = TOP + LANE * n
        # text-anchor "start" is the right end of a right-to-left text.
        parts.append(
            f'<text x="{label_x}" y="{lane_top + LANE / 2 + 4}" text-anchor="start" '
            f'class="lane">{escape(lanes[kind])}</text>'
            f'<line x1="{lane_from}" x2="{lane_to}" '
            f'y1="{lane_top + LANE / 2}" y2="{lane_top + LANE / 2}" class="lane-line"/>'
        )
    bottom = TOP + LANE * len(KINDS) + 12
    for at, label in axis.ticks():
        parts.append(
            f'<line x1="{at}" x2="{at}" y1="{TOP}" y2="{bottom - 10}" class="tick"/>'
            f'<text x="{at}" y="{bottom + 4}" text-anchor="middle" class="tick-label" '
            f'direction="ltr">{label}</text>'
        )
    for at, before, after in axis.cuts():
        gap = escape(_("Nothing from %(start)s to %(end)s") % {"start": before, "end": after})
        parts.append(
            f'<g class="cut"><title>{gap}</title>'
            f'<rect class="cut" x="{at - CUT_WIDTH / 2 + 4}" y="{TOP}" width="{CUT_WIDTH - 8}" '
            f'height="{bottom - TOP - 10}"/>'
            f'<text x="{at}" y="{bottom + 4}" text-anchor="middle">≈</text></g>'
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
        elif mark.count > 1:
            r = 9 if mark.count < 100 else 12
            shape = (
                f'<circle cx="{left}" cy="{y}" r="{r}" class="mark {mark.kind}"/>'
                f'<text x="{left}" y="{y + 4}" text-anchor="middle" class="count" '
                f'direction="ltr">{mark.count}</text>'
            )
        else:
            shape = f'<circle cx="{left}" cy="{y}" r="6" class="mark {mark.kind}"/>'
        parts.append(f'<a href="{escape(mark.url)}" class="mark">{title}{shape}</a>')
    parts.append("</svg>")
    return mark_safe("".join(parts))  # noqa: S308  (every text in it escaped above)
