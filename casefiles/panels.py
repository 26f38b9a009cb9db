"""Case panels: the places in pages where an app above the core shows its part.

The core knows no app above it. A page names a slot (``{% panels "case_links" case %}``,
tag library ``case_panels``); each app fills the slots it has something for, from its
``AppConfig.ready()``, with ``register_panel(slot, renderer)``. A renderer is called as
``renderer(context, *objects)`` (the template's context and the tag's objects) and
returns HTML, usually through ``render_snippet``; it makes its own queries, so a page
costs what its panels cost and nothing more. Slots in use:

- ``admin_home``: the home page of an admin in no case (no objects);
- ``case_links``: the case page's links to the case's parts (the case);
- ``person``: a person's page (the person, the case);
- ``testimony``: a testimony's page (the testimony, the case);
- ``item``: an evidence item's page (the item, the case).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.template import Context
from django.utils.html import conditional_escape
from django.utils.safestring import SafeString, mark_safe

Renderer = Callable[..., str]

_slots: dict[str, list[tuple[int, Renderer]]] = {}


def register_panel(slot: str, renderer: Renderer, *, order: int = 100) -> None:
    """Show ``renderer``'s HTML in ``slot``: panels of lower ``order`` first, then in the
    order they were registered."""
    renderers = _slots.setdefault(slot, [])
    if all(known is not renderer for _, known in renderers):
        renderers.append((order, renderer))
        renderers.sort(key=lambda pair: pair[0])


def panels_for(slot: str) -> tuple[Renderer, ...]:
    return tuple(renderer for _, renderer in _slots.get(slot, ()))


def render_panels(slot: str, context: Context, *objects: Any) -> SafeString:
    """Every panel of ``slot``, in the order they were registered."""
    return mark_safe(  # noqa: S308  (each part escaped unless its renderer made it safe)
        "".join(conditional_escape(render(context, *objects)) for render in panels_for(slot))
    )


def render_snippet(context: Context, template_name: str, values: dict[str, Any]) -> SafeString:
    """``template_name`` rendered with ``values`` alone, as an inclusion tag does (the
    context processors are not run again: a panel adds no query of theirs)."""
    if context.template is None:
        raise ValueError("a panel renders inside a template")
    template = context.template.engine.get_template(template_name)
    # A panel's form posts like the page's own: it carries the page's CSRF token.
    return template.render(context.new({"csrf_token": context.get("csrf_token"), **values}))
