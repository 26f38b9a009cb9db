"""``{% panels "slot" obj... %}``: what the apps above the core show there (panels.py)."""

from django import template

from ..panels import render_panels

register = template.Library()


@register.simple_tag(takes_context=True)
def panels(context, slot, *objects):
    return render_panels(slot, context, *objects)
