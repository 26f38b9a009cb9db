from django import template

register = template.Library()


@register.simple_tag
def label_of(entry, language: str | None) -> str:
    """A crime's or an element's label in the page's language (Arabic or English)."""
    return entry.label(language)
