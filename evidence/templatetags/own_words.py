"""The app's own words in a record, in the reader's language (see services.OWN_WORDS)."""

from django import template
from django.utils.translation import gettext

from ..names import shown_name as _shown_name
from ..services import OWN_NUMBERED, OWN_WORDS

register = template.Library()


@register.filter
def own_words(text: str) -> str:
    """Translated if the app wrote it; anything else exactly as recorded."""
    if text in OWN_WORDS:
        return gettext(text)
    for pattern, words in OWN_NUMBERED:
        if found := pattern.fullmatch(text):
            return gettext(words) % found.groupdict()
    return text


@register.filter
def shown_name(text: str) -> str:
    """A file or member name with its bidi controls written out (``<U+202E>``), so it
    cannot read as another name (``IMG<U+202E>gpj.exe`` as a JPEG)."""
    return _shown_name(str(text))
