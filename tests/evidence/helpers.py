from pathlib import Path

import pytest
from django.db import connection

from evidence.intake.pipeline import ingest_path
from evidence.storage import evidence_storage
from tests.evidence.images import write


def take_in(case, actor, files: dict[str, bytes], where: Path):
    """Take files in through the real pipeline, as `manage.py ingest` does."""
    for name, data in files.items():
        write(where / name, data)
    return ingest_path(actor=actor, case=case, path=where, acquired_from="W-0001", jobs=1).batch


# A test whose point is a lock or an isolation level: SQLite serialises every writer
# anyway, so there it would pass with the lock removed and prove nothing.
postgres_only = pytest.mark.skipif(
    connection.vendor != "postgresql",
    reason="proves a row lock: only PostgreSQL runs writers concurrently",
)


def stored_bytes(item) -> bytes:
    """The bytes the store holds for an item's original, read through the store."""
    with evidence_storage().open(item.original.storage_key) as fh:
        return fh.read()


def item_flags(item) -> dict[str, str]:
    """An item's flags, code: reason."""
    return {f["code"]: f["reason"] for f in item.flags}
