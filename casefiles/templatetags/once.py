"""``{% once_token %}``: the hidden one-time token of a create form (casefiles/once.py)."""

from django import template
from django.utils.html import format_html

from casefiles import once

register = template.Library()


@register.simple_tag(takes_context=True)
def once_token(context) -> str:
    token = once.token_for_form(context.get("request"))
    return format_html('<input type="hidden" name="{}" value="{}">', once.FIELD, token)
