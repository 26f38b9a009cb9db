"""Words: what the index matches (normalised words) and the snippets it shows (escaped)."""

from __future__ import annotations

import re
from collections.abc import Collection
from typing import Final

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from .normalise import normalise

_WORD: Final = re.compile(r"\w+")
# A word as written: letters and digits with their marks, tatweel and joiners inside.
_WRITTEN: Final = re.compile(
    r"(?:\w|[\u0300-\u036f\u0610-\u061a\u064b-\u065f\u0670\u06d6-\u06ed\u0640\u200c\u200d])+"
)
MAX_TERMS: Final = 12


def words(text: str) -> list[str]:
    """The normalised words of ``text``, in order."""
    return _WORD.findall(normalise(text))


def query_terms(query: str) -> list[str]:
    """A query's distinct words, first ones first, at most ``MAX_TERMS``."""
    return list(dict.fromkeys(words(query)))[:MAX_TERMS]


def _pieces(text: str, terms: frozenset[str]) -> list[tuple[int, int, bool]]:
    return [
        (m.start(), m.end(), bool(terms.intersection(words(m.group(0)))))
        for m in _WRITTEN.finditer(text)
    ]


def highlight(text: str, terms: Collection[str], width: int = 0) -> SafeString:
    """``text`` escaped, the words that normalise to one of ``terms`` in ``<mark>``; with
    ``width``, only about that many characters around the first of them."""
    found = frozenset(terms)
    pieces = _pieces(text, found)
    start, end = 0, len(text)
    if width and len(text) > width:
        first = next((p for p in pieces if p[2]), None)
        centre = first[0] if first else 0
        start = max(0, centre - width // 3)
        end = min(len(text), start + width)
        # Whole words at both ends.
        start = next((s for s, e, _ in pieces if e > start), start)
        end = max((e for s, e, _ in pieces if s < end), default=end)
    out: list[str] = ["… " if start > 0 else ""]
    at = start
    for s, e, hit in pieces:
        if e <= start or s >= end:
            continue
        out.append(escape(text[at:s]))
        out.append(f"<mark>{escape(text[s:e])}</mark>" if hit else escape(text[s:e]))
        at = e
    out.append(escape(text[at:end]))
    out.append(" …" if end < len(text) else "")
    return mark_safe("".join(out))  # noqa: S308  # every piece of text is escaped above
