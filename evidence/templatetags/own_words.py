"""The app's own words in a record, in the reader's language (see services.OWN_WORDS)."""

from django import template
from django.utils.translation import gettext

from ..flags import flag_label as _flag_label
from ..names import shown_name as _shown_name
from ..services import OWN_NUMBERED, OWN_WORDS

register = template.Library()


def _translated(text: str) -> str | None:
    if text in OWN_WORDS:
        return gettext(text)
    for pattern, words in OWN_NUMBERED:
        if found := pattern.fullmatch(text):
            return gettext(words) % found.groupdict()
    return None


def _line(line: str) -> str:
    """A line the app wrote, whole or as parts joined by "; " (a sweep's "intake
    manifest; found sha256 ..."), translated; any other line as recorded."""
    if (whole := _translated(line)) is not None:
        return whole
    parts = [_translated(part) for part in line.split("; ")]
    if len(parts) > 1 and all(part is not None for part in parts):
        return "; ".join(part for part in parts if part is not None)
    return line


@register.filter
def own_words(text: str) -> str:
    """Translated if the app wrote it; anything else exactly as recorded. A note may hold
    a person's words and, on a line of its own, what the app found (a custody event
    recorded by hand whose re-hash failed): each line is read alone."""
    return "\n".join(_line(line) for line in str(text).split("\n"))


@register.filter
def shown_name(text: str) -> str:
    """A file or member name with its bidi controls written out (``<U+202E>``), so it
    cannot read as another name (``IMG<U+202E>gpj.exe`` as a JPEG)."""
    return _shown_name(str(text))


@register.filter
def flag_label(code: str) -> str:
    """What an intake flag means, in the reader's language (evidence/flags.py)."""
    return _flag_label(str(code))
