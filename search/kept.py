"""What a search asked for, kept in the session under a short-lived random token.

The search page takes its words by POST and answers with a 303 to ``/search/?r=<token>``,
so the words never reach a URL: no access log line, browser history entry or
``Referer`` holds a searched name. The session (a database row) keeps them encrypted
(``people.crypto``, AES-256-GCM bound to the user and the token), for ``KEEP_SECONDS``
and at most ``MAX_KEPT`` searches; the token means nothing in another session or to
another user (decision 0024).
"""

from __future__ import annotations

import json
import re
import secrets
import time
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Final

from people import crypto

if TYPE_CHECKING:
    from django.http import HttpRequest

SESSION_KEY: Final = "search.kept"
KEEP_SECONDS: Final = 15 * 60
MAX_KEPT: Final = 8
_TOKEN: Final = re.compile(r"^[A-Za-z0-9_-]{22}$")


@dataclass(frozen=True)
class Asked:
    """The search box and its filters, as the form cleaned them."""

    q: str
    case: str = ""
    kind: str = ""

    def as_data(self) -> dict[str, str]:
        return asdict(self)


def _now() -> float:
    return time.time()


def _aad(request: HttpRequest, token: str) -> bytes:
    return f"search.kept|{request.user.pk}|{token}".encode()


def _fresh(request: HttpRequest) -> dict[str, tuple[float, str]]:
    """The kept searches of this session still in time, token: (when, sealed words);
    anything else is dropped."""
    kept = request.session.get(SESSION_KEY)
    if not isinstance(kept, dict):
        return {}
    now, fresh = _now(), {}
    for token, value in kept.items():
        at = value.get("at") if isinstance(value, dict) else None
        box = value.get("box") if isinstance(value, dict) else None
        if isinstance(at, int | float) and isinstance(box, str) and 0 <= now - at < KEEP_SECONDS:
            fresh[token] = (float(at), box)
    return fresh


def _store(request: HttpRequest, kept: dict[str, tuple[float, str]]) -> None:
    request.session[SESSION_KEY] = {t: {"at": at, "box": box} for t, (at, box) in kept.items()}


def keep(request: HttpRequest, asked: Asked) -> str:
    """Keep ``asked`` for this session and user (the oldest kept one goes past
    ``MAX_KEPT``); the token that recalls it."""
    token = secrets.token_urlsafe(16)
    kept = _fresh(request)
    for old in sorted(kept, key=lambda t: kept[t][0])[: max(0, len(kept) - MAX_KEPT + 1)]:
        del kept[old]
    data = json.dumps(asked.as_data(), ensure_ascii=False)
    kept[token] = (_now(), crypto.encrypt(data, _aad(request, token)))
    _store(request, kept)
    return token


def recall(request: HttpRequest, token: str) -> Asked | None:
    """The search kept under ``token`` in this session, or None: unknown, expired, of
    another user, or not opening (a changed key)."""
    if not _TOKEN.match(token):
        return None
    kept = _fresh(request)
    if len(kept) != len(request.session.get(SESSION_KEY) or {}):
        _store(request, kept)  # forget the expired ones
    if token not in kept:
        return None
    try:
        data = json.loads(crypto.decrypt(kept[token][1], _aad(request, token)))
        return Asked(**{k: str(data.get(k, "")) for k in ("q", "case", "kind")})
    except (crypto.DecryptionError, ValueError, AttributeError):
        return None
