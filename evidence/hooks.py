"""What the apps above evidence add to its writes, without evidence knowing them: they
register a callback from their ``AppConfig.ready()`` (as legal registers a reopener with
``casefiles.reviewing``). Slots in use:

- ``when_positions_recorded(callback)``: called inside intake's transaction with the
  case's id and ``[(item id, latitude, longitude), ...]`` of the items of a chunk whose
  photos record a GPS position (places resolves each to its nearest town).
"""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal

Position = tuple[int, Decimal, Decimal]
PositionsHook = Callable[[int, list[Position]], object]

_positions_hooks: list[PositionsHook] = []


def when_positions_recorded(callback: PositionsHook) -> None:
    if callback not in _positions_hooks:
        _positions_hooks.append(callback)


def positions_recorded_within(case_id: int, positions: list[Position]) -> None:
    """Run every registered callback (inside the caller's transaction)."""
    if positions:
        for callback in _positions_hooks:
            callback(case_id, positions)
