"""Words: what the index matches (normalised words) and the snippets it shows (escaped)."""

from __future__ import annotations

import re
from collections.abc import Collection
from functools import lru_cache
from html import escape
from typing import Final

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


@lru_cache(maxsize=65536)
def _word(written: str) -> frozenset[str]:
    """The normalised words of one word as written (a word seen once is seen again)."""
    return frozenset(words(written))


def _inside_word(text: str, at: int) -> bool:
    return bool(_WRITTEN.match(text[at - 1]) and _WRITTEN.match(text[at]))


def _window(text: str, found: frozenset[str], width: int) -> tuple[int, int]:
    """About ``width`` characters of ``text`` around the first word found, whole words."""
    centre = next((m.start() for m in _WRITTEN.finditer(text) if _word(m.group(0)) & found), 0)
    start = max(0, centre - width // 3)
    end = min(len(text), start + width)
    if start > 0 and _inside_word(text, start):  # a word cut at the start: left out
        space = text.find(" ", start, centre)
        start = space + 1 if space >= 0 else start
    if end < len(text) and _inside_word(text, end):  # and at the end
        space = text.rfind(" ", max(start, centre), end)
        end = space if space > 0 else end
    return start, end


def highlight(text: str, terms: Collection[str], width: int = 0) -> SafeString:
    """``text`` escaped, the words that normalise to one of ``terms`` in ``<mark>``; with
    ``width``, only about that many characters around the first of them."""
    found = frozenset(terms)
    start, end = _window(text, found, width) if width and len(text) > width else (0, len(text))
    out: list[str] = ["… " if start > 0 else ""]
    at = start
    for m in _WRITTEN.finditer(text, start, end):
        if _word(m.group(0)) & found:  # plain text between marks is escaped in one piece
            out.append(escape(text[at : m.start()]))
            out.append(f"<mark>{escape(m.group(0))}</mark>")
            at = m.end()
    out.append(escape(text[at:end]))
    out.append(" …" if end < len(text) else "")
    return mark_safe("".join(out))  # noqa: S308  # every piece of text is escaped above (as Django escapes: & < > " ')
