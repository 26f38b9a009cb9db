"""How the pages write what must read the same in every language.

Numbers a reader copies or compares (coordinates, sizes in bytes, camera values) are
written with a dot and no grouping in both languages: ``base.html`` turns localisation off
for every page, and sizes, which ``filesizeformat`` would write in the reader's locale
("2,4 ميغابايت"), go through ``size`` here. Audit actions, stored as codes, are shown by
their label in the reader's language.
"""

from django import template
from django.utils.translation import gettext

register = template.Library()

_UNITS = ("KB", "MB", "GB", "TB", "PB")


def _number(value: float) -> str:
    """One decimal place, dot-separated, without a trailing ".0"."""
    text = f"{value:.1f}"
    return text[:-2] if text.endswith(".0") else text


@register.filter
def size(value) -> str:
    """A size in bytes, exactly and roughly: "2516582 bytes (2.4 MB)"; the same digits in
    every language, units as SI symbols (1 KB = 1024 bytes, as the file managers count)."""
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
    return exact if unit is None else f"{exact} ({_number(rough)} {unit})"


@register.filter
def audit_action(code: str) -> str:
    """The label of an audit action in the reader's language; the code if it has none."""
    from casefiles.audit_actions import label

    found = label(code)
    return str(found) if found is not None else code
