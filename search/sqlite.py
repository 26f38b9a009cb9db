"""``athar_normalise`` on SQLite: the Python function itself, registered per connection."""

from __future__ import annotations

from django.db.backends.base.base import BaseDatabaseWrapper

from .normalise import normalise
from .sql import FUNCTION


def sqlite_normalise(value: object) -> str | None:
    """SQLite hands over text, numbers, bytes or NULL; NULL stays NULL (as ``STRICT``)."""
    if value is None:
        return None
    if isinstance(value, bytes):
        value = value.decode("utf-8", errors="replace")
    return normalise(str(value))


def register(connection: BaseDatabaseWrapper) -> None:
    if connection.vendor == "sqlite":
        connection.connection.create_function(FUNCTION, 1, sqlite_normalise, deterministic=True)
