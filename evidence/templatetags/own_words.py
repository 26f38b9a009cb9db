"""The app's own words in a record, in the reader's language (see services.OWN_WORDS)."""

from django import template
from django.utils.translation import gettext

from ..services import OWN_WORDS

register = template.Library()


@register.filter
def own_words(text: str) -> str:
    """Translated if the app wrote it; anything else exactly as recorded."""
    return gettext(text) if text in OWN_WORDS else text
