"""How the pages write what must read the same in every language.

Numbers a reader copies or compares (coordinates, sizes in bytes, camera values) are
written with a dot and no grouping in both languages: ``base.html`` turns localisation off
for every page, and sizes, which ``filesizeformat`` would write in the reader's locale
("2,4 ميغابايت"), go through ``size`` here. Audit actions, stored as codes, are shown by
their label in the reader's language.

Dates, times, sizes and distances come out isolated in a ``<bdi>`` (``when``, ``size``,
``km``): on an Arabic page a bare "2014-03-12 10:20" is laid out right to left as
"10:20 2014-03-12", and a size's "(2.4 MB)" or a distance's figure is pulled into the
words around it. Each value is escaped, and written the same in both languages.
"""

from django import template
from django.template.defaultfilters import date as format_date
from django.utils.html import format_html
from django.utils.safestring import SafeString
from django.utils.translation import gettext

register = template.Library()

_UNITS = ("KB", "MB", "GB", "TB", "PB")


def _number(value: float) -> str:
    """One decimal place, dot-separated, without a trailing ".0"."""
    text = f"{value:.1f}"
    return text[:-2] if text.endswith(".0") else text


@register.filter
def when(value, arg: str = "Y-m-d H:i") -> SafeString | str:
    """A date or a time as ``date`` writes it (in the server's zone), in a left-to-right
    ``<bdi>``: the figures of "2014-03-12 10:20" stay in their order on an Arabic page.
    Nothing for no value, so ``|default:"—"`` still applies."""
    if value in (None, ""):
        return ""
    text = format_date(value, arg)
    if not text:
        return ""
    return format_html('<bdi class="when" dir="ltr">{}</bdi>', text)


@register.filter
def size(value) -> SafeString | str:
    """A size in bytes, exactly and roughly: "2516582 bytes (2.4 MB)"; the same digits in
    every language, units as SI symbols (1 KB = 1024 bytes, as the file managers count).
    Isolated in a ``<bdi>``, and the rough size with its Latin unit in one of its own,
    left to right, so that "(2.4 MB)" keeps its order after the Arabic "بايت"."""
    try:
        count = int(value)
    except (TypeError, ValueError):
        return ""
    exact = gettext("%(bytes)s bytes") % {"bytes": count}
    rough, unit = float(count), None
    for candidate in _UNITS:
        if rough < 1024:
            break
        rough, unit = rough / 1024, candidate
    if unit is None:
        return format_html('<bdi class="size">{}</bdi>', exact)
    return format_html(
        '<bdi class="size">{} (<bdi dir="ltr">{} {}</bdi>)</bdi>', exact, _number(rough), unit
    )


@register.filter
def km(value) -> SafeString | str:
    """A distance in kilometres, to one decimal place with a dot, and its unit in the
    reader's language ("3.2 km", "3.2 كم"), isolated in a ``<bdi>``."""
    try:
        distance = float(value)
    except (TypeError, ValueError):
        return ""
    text = gettext("%(km)s km") % {"km": f"{distance:.1f}"}
    return format_html('<bdi class="distance">{}</bdi>', text)


@register.filter
def audit_action(code: str) -> str:
    """The label of an audit action in the reader's language; the code if it has none."""
    from casefiles.audit_actions import label

    found = label(code)
    return str(found) if found is not None else code
