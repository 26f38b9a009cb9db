"""Path converters of the project's URLs.

``text`` replaces Django's ``str``: a segment holding a control character (NUL above
all: PostgreSQL text cannot hold it, and a query with one fails with ``DataError``) does
not match, so such a URL is a plain 404 before any view or query runs.
"""

from django.urls import register_converter
from django.urls.converters import StringConverter


class TextConverter(StringConverter):
    """Any text but ``/`` and the control characters (C0, DEL and C1)."""

    regex = r"[^/\x00-\x1f\x7f-\x9f]+"


register_converter(TextConverter, "text")
