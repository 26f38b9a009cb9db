"""What the apps above people add to its writes, without people knowing them: they
register a callback from their ``AppConfig.ready()`` (as places registers with
``evidence.hooks``). Slots in use:

- ``when_victim_status_changed(callback)``: called inside the transaction that changes
  a person's victim status, after the person row is written and before the change's
  audit entry, with ``(actor, person, old, new, reason)`` (the missing app keeps the
  change in the history of the person's antemortem profile). A callback returns the
  append-only rows it wrote, ``{Model: [pk, ...]}`` (or None): the change's audit entry
  binds them (``casefiles.bindings``). A callback may raise ``ValidationError`` to refuse
  the change: the whole transaction is then rolled back.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from django.contrib.auth.models import User as Account

    from .models import Person

Written = Mapping[Any, Iterable[Any]]  # {Model: [pk, ...]}, as audit.record(binds=...)
StatusHook = Callable[["Account", "Person", str, str, str], "Written | None"]

_status_hooks: list[StatusHook] = []


def when_victim_status_changed(callback: StatusHook) -> None:
    if callback not in _status_hooks:
        _status_hooks.append(callback)


def victim_status_changed_within(
    actor: Account, person: Person, old: str, new: str, reason: str
) -> dict[Any, list[Any]]:
    """Run every registered callback (inside the caller's transaction); returns the rows
    they wrote, for the change's audit entry to bind."""
    written: dict[Any, list[Any]] = {}
    for callback in _status_hooks:
        for model, pks in (callback(actor, person, old, new, reason) or {}).items():
            written.setdefault(model, []).extend(pks)
    return written
