from django.apps import AppConfig
from django.db.backends.base.base import BaseDatabaseWrapper
from django.utils.translation import gettext_lazy as _


class SearchConfig(AppConfig):
    name = "search"
    verbose_name = _("Search")

    def ready(self) -> None:
        from django.db.backends.signals import connection_created

        from casefiles import audit

        from . import declared, index, names_index  # noqa: F401  (declared registers its kinds)

        connection_created.connect(_register_functions, dispatch_uid="athar_search_functions")
        # The index follows every audited write, inside its transaction (decision 0013).
        audit.follow(index.follow)
        audit.follow(names_index.follow)


def _register_functions(sender: object, connection: BaseDatabaseWrapper, **kwargs: object) -> None:
    """SQLite has no ``athar_normalise``: each new connection gets ``normalise`` under that
    name (PostgreSQL has its SQL twin from migration 0001)."""
    from .sqlite import register

    register(connection)
