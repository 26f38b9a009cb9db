"""What a page shows, read as HTML: for tests that ask whether something is on a page.

A search of the raw page (``"B2" not in response.content.decode()``) also searches the
CSRF token, 64 random letters and digits, new on every page with a form: a test that a
short string is absent then fails whenever the token happens to contain it (two letters:
about one page in sixty), and a test that it is present can pass on the token alone.
It also searches markup, attribute names and script contents, which no reader sees.

These helpers parse the page with the standard library's ``html.parser`` and look only
at what a person is shown or a browser follows, never at the CSRF token, a ``<script>``
or a ``<style>`` element's contents, or comments:

- ``page_text(page)``: the visible text, entities decoded, every run of whitespace one
  space; elements other than inline ones (cells, paragraphs, list items, options, line
  breaks...) are apart by a space, so the words of two cells never run together, while
  ``<strong>C</strong>3`` reads "C3", as on screen.
- ``has_text(page, text)``: ``text`` (its whitespace collapsed alike) is in that text.
- ``attrs(page, name, tag=None)``: the values of attribute ``name`` (of ``tag`` elements
  only, if given), decoded (``&amp;`` is ``&``), in the page's order.
- ``shows(page, text)``: ``text`` is in the visible text or in any attribute's value
  (a hidden field, a link, an image's alt text, a button's label). Assert that something
  is *not* on a page with it: nothing a person or a browser could read holds it.

``page`` is a response (its content decoded as UTF-8) or the HTML itself. Assertions on
markup itself (``'class="gap"'``, ``'http-equiv="refresh"'``) still read the raw page.
"""

from __future__ import annotations

from functools import lru_cache
from html.parser import HTMLParser
from typing import Any

CSRF_FIELD = "csrfmiddlewaretoken"
# Hidden fields of random values, new on every page: the CSRF token and a create form's
# one-time token (casefiles/once.py). Their values are never "shown".
RANDOM_FIELDS = frozenset({CSRF_FIELD, "once"})
# Elements whose contents are not text a reader sees.
UNSEEN = frozenset({"script", "style"})
# Elements inside a line of text: no space before or after them.
INLINE = frozenset(
    {
        "a",
        "abbr",
        "b",
        "bdi",
        "bdo",
        "cite",
        "code",
        "data",
        "del",
        "dfn",
        "em",
        "i",
        "ins",
        "kbd",
        "label",
        "mark",
        "q",
        "s",
        "samp",
        "small",
        "span",
        "strong",
        "sub",
        "sup",
        "time",
        "u",
        "var",
        "wbr",
    }
)


class _Reader(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.text: list[str] = []
        self.attributes: list[tuple[str, str, str]] = []  # (tag, name, value)
        self._unseen = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._element(tag, attrs)
        if tag in UNSEEN:
            self._unseen += 1

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._element(tag, attrs)

    def handle_endtag(self, tag: str) -> None:
        if tag in UNSEEN:
            self._unseen = max(0, self._unseen - 1)
        elif tag not in INLINE:
            self.text.append(" ")

    def handle_data(self, data: str) -> None:
        if not self._unseen:
            self.text.append(data)

    def _element(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in INLINE:
            self.text.append(" ")
        csrf = tag == "input" and any(k == "name" and v in RANDOM_FIELDS for k, v in attrs)
        for name, value in attrs:
            if not (csrf and name == "value"):
                self.attributes.append((tag, name, value or ""))


@lru_cache(maxsize=64)
def _read(html: str) -> _Reader:
    reader = _Reader()
    reader.feed(html)
    reader.close()
    return reader


def _html(page: Any) -> str:
    if isinstance(page, str):
        return page
    if isinstance(page, bytes):
        return page.decode()
    return page.content.decode()


def _collapse(text: str) -> str:
    return " ".join(text.split())


def page_text(page: Any) -> str:
    """The text a reader sees on the page, whitespace collapsed (see the module)."""
    return _collapse("".join(_read(_html(page)).text))


def has_text(page: Any, text: str) -> bool:
    """Whether ``text`` is in the page's visible text."""
    return _collapse(text) in page_text(page)


def attrs(page: Any, name: str, tag: str | None = None) -> list[str]:
    """The values of attribute ``name`` on the page's elements (``tag``'s only, if
    given), never the CSRF token."""
    return [
        value
        for element, attribute, value in _read(_html(page)).attributes
        if attribute == name and (tag is None or element == tag)
    ]


def shows(page: Any, text: str) -> bool:
    """Whether ``text`` is anywhere a person or a browser reads: the visible text or an
    attribute's value (never the CSRF token, nor a script's contents)."""
    if has_text(page, text):
        return True
    return any(text in value for _, _, value in _read(_html(page)).attributes)
