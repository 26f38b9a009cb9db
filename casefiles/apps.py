from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class CasefilesConfig(AppConfig):
    name = "casefiles"
    verbose_name = _("Cases and audit")

    def ready(self) -> None:
        from django.db.models.signals import post_migrate

        from . import checks, signals  # noqa: F401  (registers checks and auth receivers)

        post_migrate.connect(_verify_guards, sender=self, dispatch_uid="athar_verify_guards")


def _verify_guards(sender, using, verbosity=1, stdout=None, **kwargs) -> None:
    """After every migrate: the append-only guards of every applied migration are there."""
    import sys

    from django.db import connections

    from .db import verify_guards

    restored = verify_guards(connections[using])
    if restored and verbosity:
        (stdout or sys.stdout).write(
            f"  Append-only guards put back on {', '.join(restored)} "
            "(SQLite drops a table's triggers when a migration rebuilds it)\n"
        )
