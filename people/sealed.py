"""The registry of sealed columns: every column, in any app, that holds a ``crypto``
ciphertext.

A sealed column is a model field named ``enc_*``. The app that owns the model declares
its sealed columns here from its ``AppConfig.ready()`` (``register``): which model, which
columns, how each value's associated data is formed. ``manage.py rotate_keys`` re-encrypts
every registered column of every row (``services.rotate_field_keys``); a column left out
would keep its old key, and removing that key would lose it, so
tests/people/test_sealed_registry.py fails while any ``enc_*`` field of any installed app
is not registered.

``people`` sits below the apps whose models it seals (``missing``…) and imports none of
them: they register themselves.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from django.db import models

from . import crypto

PREFIX = "enc_"


def row_and_column(row: models.Model, column: str) -> bytes:
    """The usual associated data: ``<table>|<row id>|<column>``."""
    return crypto.associated_data(row._meta.db_table, row.pk, column)


@dataclass(frozen=True)
class SealedColumns:
    """The sealed columns of one model."""

    model: type[models.Model]
    columns: tuple[str, ...]
    associated_data: Callable[[Any, str], bytes]
    # Columns where "" means nothing was sealed yet (a column added after its rows, or a
    # value recorded later): they open as "" and rotation seals them.
    blank: frozenset[str]
    # Run inside the chunk's transaction after a row is sealed again and saved (people
    # rebuild their name index there, so a new index key takes effect too).
    resealed: Callable[[Any], None] | None

    @property
    def label(self) -> str:
        return self.model._meta.label

    def open(self, row: models.Model, column: str) -> str:
        stored = getattr(row, column)
        if not stored and column in self.blank:
            return ""
        return crypto.decrypt(stored, self.associated_data(row, column))

    def seal(self, row: models.Model, column: str, value: str) -> None:
        setattr(row, column, crypto.encrypt(value, self.associated_data(row, column)))


_registry: dict[str, SealedColumns] = {}


def register(
    model: type[models.Model],
    columns: Iterable[str],
    *,
    associated_data: Callable[[Any, str], bytes] = row_and_column,
    blank: Iterable[str] = (),
    resealed: Callable[[Any], None] | None = None,
) -> SealedColumns:
    """Declare ``model``'s sealed columns (field names, ``enc_*``). Registering a model
    again replaces its entry (``ready()`` may run more than once in tests)."""
    columns = tuple(columns)
    names = {f.name for f in model._meta.concrete_fields}
    wrong = [c for c in columns if not c.startswith(PREFIX) or c not in names]
    if not columns or wrong:
        raise ValueError(f"{model._meta.label}: not sealed columns of the model: {wrong}")
    if not set(blank) <= set(columns):
        raise ValueError(f"{model._meta.label}: blank columns must be among the columns")
    entry = SealedColumns(model, columns, associated_data, frozenset(blank), resealed)
    _registry[entry.label] = entry
    return entry


def unregister(model: type[models.Model]) -> SealedColumns | None:
    return _registry.pop(model._meta.label, None)


def registered() -> list[SealedColumns]:
    """Every registered model, in a stable order (by label)."""
    return [_registry[label] for label in sorted(_registry)]


def sealed_fields(model: type[models.Model]) -> list[str]:
    """The fields of ``model`` that hold ciphertexts, by the project's naming."""
    return [f.name for f in model._meta.concrete_fields if f.name.startswith(PREFIX)]
