"""What a user is shown of graphic items (docs/decisions/0011-graphic-content.md).

A graphic item shows its blurred thumbnail, wherever it is listed and at every URL that
serves its pictures, until the user reveals it: a POST from the item's page, audited
(``evidence.graphic_reveal``), kept in that user's session for ``REVEAL_SECONDS``. Then
its page shows the real preview and, unless the user chose "always blur graphic images"
(``accounts.models.Preferences``), list pages its real thumbnail. The views that serve
pictures ask here; nothing else decides.
"""

from __future__ import annotations

import time
from collections.abc import Iterable

from django.http import HttpRequest

from accounts.models import Preferences
from casefiles.access import account_of

REVEAL_SECONDS = 15 * 60
SESSION_KEY = "evidence.graphic_revealed"  # {str(item pk): until (epoch seconds)}


def _live(request: HttpRequest) -> dict[str, float]:
    now = time.time()
    held = request.session.get(SESSION_KEY) or {}
    return {pk: until for pk, until in held.items() if until > now}


def is_revealed(request: HttpRequest, pk: int) -> bool:
    """Whether this user revealed item ``pk`` in this session, not long ago."""
    return str(pk) in _live(request)


def remember_reveal(request: HttpRequest, pk: int) -> None:
    """The user revealed item ``pk`` (the caller audits it)."""
    live = _live(request)
    live[str(pk)] = time.time() + REVEAL_SECONDS
    request.session[SESSION_KEY] = live


def forget_reveal(request: HttpRequest, pk: int) -> None:
    live = _live(request)
    if live.pop(str(pk), None) is not None:
        request.session[SESSION_KEY] = live


def real_thumbnails(request: HttpRequest, graphic: Iterable[int]) -> set[int]:
    """Of the graphic items ``graphic`` (pks) a list shows, those whose real thumbnail it
    may show this user: revealed, and the user does not keep every graphic image blurred.
    No query unless one of them was revealed."""
    live = _live(request)
    revealed = {pk for pk in graphic if str(pk) in live}
    if revealed and Preferences.blurs_graphic(account_of(request)):
        return set()
    return revealed


def shows_real_thumbnail(request: HttpRequest, pk: int, is_graphic: bool) -> bool:
    return not is_graphic or pk in real_thumbnails(request, [pk])


def shows_real_preview(request: HttpRequest, pk: int, is_graphic: bool) -> bool:
    """The item's own page: its real picture only once revealed there, whatever the
    preference (the reveal on that item is the one thing the preference lets through)."""
    return not is_graphic or is_revealed(request, pk)
