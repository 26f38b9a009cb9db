"""The form renderer of every form: a field's length limit is said, not enforced by
cutting.

A browser given ``maxlength`` stops typing at the limit and silently cuts a pasted text
there: a testimony excerpt or a reason loses its end without a word. Here the attribute
is left out of the HTML, so the server's validation speaks ("Ensure this value has at
most 2000 characters (it has 2350)"), on the page that keeps all that was typed; and a
text area says its limit under it ("At most 2000 characters."), tied to it by
``aria-describedby``. The limit itself is unchanged: the field still refuses more.
"""

from __future__ import annotations

from typing import Any

from django.forms.renderers import DjangoTemplates
from django.utils.html import format_html
from django.utils.translation import gettext

TEXTAREA = "django/forms/widgets/textarea.html"


class FormRenderer(DjangoTemplates):
    def render(self, template_name: str, context: dict[str, Any], request: Any = None) -> str:
        widget = context.get("widget")
        if not isinstance(widget, dict) or "maxlength" not in widget.get("attrs", {}):
            return super().render(template_name, context, request)
        attrs = dict(widget["attrs"])  # a copy: the widget's own attrs stay as declared
        limit = attrs.pop("maxlength")
        said = template_name == TEXTAREA and attrs.get("id")
        if said:
            hint_id = f"{attrs['id']}-limit"
            attrs["aria-describedby"] = " ".join(
                filter(None, [attrs.get("aria-describedby", ""), hint_id])
            )
        context = {**context, "widget": {**widget, "attrs": attrs}}
        html = super().render(template_name, context, request)
        if not said:
            return html
        hint = gettext("At most %(limit)s characters.") % {"limit": limit}
        # The widget marks the whole safe: the template escaped its part, format_html this.
        return html + format_html(' <span class="hint limit" id="{}">{}</span>', hint_id, hint)
