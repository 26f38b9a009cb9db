"""The app's own words in a record, in the reader's language (see services.OWN_WORDS)."""

from django import template
from django.utils.translation import gettext

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
