"""Widgets whose HTML is written in Python rather than through the form templates.

Django renders a ``<select>`` by including one template per option; on a page that
carries a few lists (an item's page: the legal elements, the assessment's grades) that
costs more than all its queries. ``Select`` writes exactly the HTML Django's own widget
writes (tests compare the two, option groups, selection and attributes included), in a
fraction of the time.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString, mark_safe


def _attrs(attrs: dict[str, Any]) -> SafeString:
    """As ``django/forms/widgets/attrs.html``: ``False`` leaves an attribute out,
    ``True`` writes its name alone."""
    return format_html_join(
        "",
        "{}",
        (
            (format_html(" {}", name) if value is True else format_html(' {}="{}"', name, value),)
            for name, value in attrs.items()
            if value is not False
        ),
    )


def _option(option: dict[str, Any]) -> SafeString:
    return format_html(
        '<option value="{}"{}>{}</option>',
        str(option["value"]),
        _attrs(option["attrs"]),
        option["label"],
    )


class Select(forms.Select):
    """``forms.Select``, its HTML written here (``django/forms/widgets/select.html``)."""

    def render(
        self, name: str, value: Any, attrs: dict[str, Any] | None = None, renderer: Any = None
    ) -> SafeString:
        widget = self.get_context(name, value, attrs)["widget"]
        parts = [format_html('<select name="{}"{}>', widget["name"], _attrs(widget["attrs"]))]
        for group_name, group_choices, _index in widget["optgroups"]:
            if group_name:
                parts.append(format_html('\n  <optgroup label="{}">', group_name))
            # Each option's template ends in a newline, kept as Django keeps it.
            parts.extend(
                mark_safe("\n  ") + _option(option) + mark_safe("\n") for option in group_choices
            )
            if group_name:
                parts.append(mark_safe("\n  </optgroup>"))
        parts.append(mark_safe("\n</select>"))
        return mark_safe("".join(parts))  # noqa: S308  (each part escaped above)
