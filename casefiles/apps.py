from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class CasefilesConfig(AppConfig):
    name = "casefiles"
    verbose_name = _("Cases and audit")

    def ready(self) -> None:
        from django.db.models.signals import post_migrate, pre_migrate

        from . import (
            audit,
            checks,  # noqa: F401  (registers the checks)
            once,
        )
        from .tasks import after_entry

        audit.follow(once.spend)  # a create form's token is spent with its write
        audit.follow(after_entry)  # a checkpoint after each reveal and build (decision 0025)

        pre_migrate.connect(_note_missing_guards, sender=self, dispatch_uid="athar_note_guards")
        post_migrate.connect(_verify_guards, sender=self, dispatch_uid="athar_verify_guards")


# Guards found missing before a migrate ran, by database alias: none of its migrations
# dropped those (a migration rebuilding a SQLite table drops its triggers; that is not
# an alarm), so someone did.
_missing_before: dict[str, list] = {}


def _note_missing_guards(sender, using, **kwargs) -> None:
    from django.db import connections

    from .db import missing_guards

    _missing_before[using] = missing_guards(connections[using])


def _verify_guards(sender, using, verbosity=1, stdout=None, **kwargs) -> None:
    """After every migrate: the append-only guards of every applied migration are there.

    A guard already missing before the migrate is an error (said on stderr, logged, and
    recorded in the audit log) on both databases; PostgreSQL then stops, SQLite puts the
    guard back. A guard dropped by this migrate's own table rebuilds (SQLite) is put back
    quietly.
    """
    import logging
    import sys

    from django.core.management.color import color_style
    from django.db import connections

    from . import audit
    from .db import verify_guards

    connection = connections[using]
    if before := _missing_before.pop(using, []):
        tables = {table: lacking for table, _, lacking in before}
        names = ", ".join(f"{table} ({', '.join(lacking)})" for table, lacking in tables.items())
        message = (
            f"ERROR: database guards were missing before this migrate: {names}. No "
            "migration removes them: someone did, or dropped them with a table. The "
            "audit log records this; verify_audit shows whether a row was changed "
            "meanwhile."
        )
        if connection.vendor == "sqlite":
            message += " They are put back now."
        sys.stderr.write(color_style().ERROR(message) + "\n")
        logging.getLogger("athar.guards").error(message)
        audit.record(None, "audit.guard_missing", tables=tables, database=connection.vendor)
    restored = verify_guards(connection)
    if restored and verbosity:
        (stdout or sys.stdout).write(
            f"  Append-only guards put back on {', '.join(restored)} "
            "(SQLite drops a table's triggers when a migration rebuilds it)\n"
        )
