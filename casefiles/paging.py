"""Pages that stay as fast on the millionth row as on the first (decision 0016).

**Keyset pages.** A page is the rows after (or before) the last row the reader saw, in an
order that is unique (an item's reference, an entry's number, a code with its role), so
the database reads one page of rows from an index wherever the page lies; ``OFFSET``
reads and throws away every row before it, and a page number moves under the reader
when rows are added. The page's links carry ``after`` or ``before``: the key of its last
or first row.

**Counts that stop.** A list says how many rows it has by counting at most
``COUNT_LIMIT + 1`` of them: up to the limit the count is exact; past it the page says
so ("more than 1000"), and on PostgreSQL gives the planner's estimate of the whole,
shown as one ("about 1,000,000"). Counting a million rows on every page is what made the
gallery slow at scale.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.contrib import messages
from django.db import connections
from django.db.models import Model, Q, QuerySet
from django.http import HttpRequest, QueryDict
from django.utils.translation import gettext as _

COUNT_LIMIT = 1000
CURSOR_LIMIT = 400  # characters: a key is a reference, a number or a short code


@dataclass(frozen=True)
class Count:
    """How many rows a list has, and how well that is known."""

    value: int
    exact: bool = True
    estimated: bool = False  # the planner's figure for the whole (PostgreSQL)

    def __str__(self) -> str:
        shown = str(self.value)  # the same digits in every language (athar_format)
        if self.exact:
            return shown
        if self.estimated:
            return _("about %(count)s") % {"count": shown}
        return _("more than %(count)s") % {"count": shown}


def count(queryset: QuerySet[Any], limit: int | None = None) -> Count:
    """The rows of ``queryset``, counted up to ``limit`` (``COUNT_LIMIT``): one query; a
    second, on PostgreSQL, only past the limit (the planner's estimate, not a scan)."""
    limit = COUNT_LIMIT if limit is None else limit
    # Only the key: the list's annotations (thumbnails, flags) are not worked out for the
    # rows counted.
    found = queryset.order_by().values("pk")[: limit + 1].count()
    if found <= limit:
        return Count(found)
    if connections[queryset.db].vendor == "postgresql":
        estimate = _planner_rows(queryset)
        if estimate > limit:
            return Count(_rounded(estimate), exact=False, estimated=True)
    return Count(limit, exact=False)


def _planner_rows(queryset: QuerySet[Any]) -> int:
    plan = json.loads(queryset.order_by().values("pk").explain(format="json"))
    return int(plan[0]["Plan"]["Plan Rows"])


def _rounded(n: int) -> int:
    """Two significant figures: an estimate shown to the unit would claim too much."""
    digits = len(str(n))
    step = 10 ** max(digits - 2, 0)
    return round(n / step) * step


def number(text: str) -> int:
    """A whole number as a key: at most 18 digits, so it fits a 64-bit column."""
    if not re.fullmatch(r"[0-9]{1,18}", text):
        raise ValueError("not a number")
    return int(text)


@dataclass(frozen=True)
class Key:
    """One column of a keyset order: ``"reference"``, ``"-seq"``, ``"person__code"``."""

    path: str
    parse: Callable[[str], Any] = str

    @property
    def descending(self) -> bool:
        return self.path.startswith("-")

    @property
    def lookup(self) -> str:
        return self.path.lstrip("-")

    def of(self, row: Model) -> Any:
        value: Any = row
        for part in self.lookup.split("__"):
            value = getattr(value, part)
        return value


@dataclass
class Page:
    """One page of rows, and where the pages either side begin. Iterating it gives the
    rows, as a Django page does."""

    rows: list[Any]
    has_previous: bool
    has_next: bool
    first: str  # the cursor of the first row: the previous page ends before it
    last: str  # the cursor of the last row: the next page begins after it
    query: str  # the list's own query (its filters), without a cursor
    total: Count | None = None
    invalid_cursor: bool = field(default=False)

    def __iter__(self) -> Iterator[Any]:
        return iter(self.rows)

    def __len__(self) -> int:
        return len(self.rows)

    def _url(self, **cursor: str) -> str:
        query = QueryDict(self.query, mutable=True)
        for name, value in cursor.items():
            query[name] = value
        return "?" + query.urlencode()

    @property
    def first_url(self) -> str:
        return "?" + self.query

    @property
    def previous_url(self) -> str:
        return self._url(before=self.first)

    @property
    def next_url(self) -> str:
        return self._url(after=self.last)


class Keyset:
    """The order of a list, unique over its rows, and its pages."""

    def __init__(self, *keys: Key | str, size: int) -> None:
        self.keys = tuple(k if isinstance(k, Key) else Key(k) for k in keys)
        self.size = size

    def order(self) -> list[str]:
        return [k.path for k in self.keys]

    def reversed_order(self) -> list[str]:
        return [k.lookup if k.descending else f"-{k.lookup}" for k in self.keys]

    # Cursors: one key's value as it is (a reference reads as itself in the URL); several,
    # as base64url of a JSON list.
    def cursor(self, row: Model) -> str:
        values = [k.of(row) for k in self.keys]
        if len(values) == 1:
            return str(values[0])
        raw = json.dumps([str(v) for v in values], ensure_ascii=False, separators=(",", ":"))
        return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")

    def parse(self, cursor: str) -> list[Any]:
        """The key values a cursor names; ValueError for one this list never gave."""
        if len(cursor) > CURSOR_LIMIT or "\x00" in cursor:
            raise ValueError("cursor")
        if len(self.keys) == 1:
            texts: Sequence[Any] = [cursor]
        else:
            try:
                padded = cursor + "=" * (-len(cursor) % 4)
                texts = json.loads(base64.urlsafe_b64decode(padded.encode()).decode())
            except (binascii.Error, UnicodeError, json.JSONDecodeError) as exc:
                raise ValueError("cursor") from exc
            if not isinstance(texts, list) or len(texts) != len(self.keys):
                raise ValueError("cursor")
        if not all(isinstance(t, str) and "\x00" not in t for t in texts):
            raise ValueError("cursor")
        return [k.parse(t) for k, t in zip(self.keys, texts, strict=True)]

    def _beyond(self, values: list[Any], *, forward: bool) -> Q:
        """Rows strictly after ``values`` in this order (``forward``), or before them."""
        beyond = Q()
        for i, key in enumerate(self.keys):
            later = key.descending != forward  # ascending and forward: greater
            step = Q(**{f"{key.lookup}__{'gt' if later else 'lt'}": values[i]})
            for earlier, value in zip(self.keys[:i], values[:i], strict=True):
                step &= Q(**{earlier.lookup: value})
            beyond |= step
        return beyond

    def page(
        self,
        queryset: QuerySet[Any],
        request: HttpRequest,
        *,
        query: str = "",
        total: bool = True,
        after: str | None = None,
    ) -> Page:
        """The page ``request`` asks for (``?after=`` or ``?before=``; neither: the first)
        of ``queryset``, in one query, and its count (``total``) in one more. A cursor
        this list never gave shows the first page, with a message saying so. ``after``,
        when given, is the page's cursor instead of the request's (a form sent back with
        an error is shown on the page of the row it was for)."""
        if after is not None:
            before = ""
        else:
            after, before = request.GET.get("after", ""), request.GET.get("before", "")
        invalid = False
        try:
            after_values = self.parse(after) if after else None
            before_values = self.parse(before) if before else None
        except (ValueError, TypeError):
            messages.warning(
                request, _("That page position is not valid: the first page is shown.")
            )
            after_values = before_values = None
            invalid = True
        size = self.size
        if before_values is not None:
            found = queryset.filter(self._beyond(before_values, forward=False))
            rows = list(found.order_by(*self.reversed_order())[: size + 1])
            shown = rows[:size][::-1]
            has_previous, has_next = len(rows) > size, True
        else:
            found = queryset
            if after_values is not None:
                found = found.filter(self._beyond(after_values, forward=True))
            rows = list(found.order_by(*self.order())[: size + 1])
            shown = rows[:size]
            has_previous, has_next = after_values is not None, len(rows) > size
        return Page(
            rows=shown,
            has_previous=has_previous and bool(shown),
            has_next=has_next and bool(shown),
            first=self.cursor(shown[0]) if shown else "",
            last=self.cursor(shown[-1]) if shown else "",
            query=query,
            total=count(queryset) if total else None,
            invalid_cursor=invalid,
        )


def list_query(request: HttpRequest, *dropped: str) -> str:
    """The request's query without its cursors (and ``dropped``): what the page links
    keep."""
    query = request.GET.copy()
    for name in ("after", "before", "page", *dropped):
        query.pop(name, None)
    for name in [k for k, v in query.items() if not v]:
        query.pop(name)
    return query.urlencode()
