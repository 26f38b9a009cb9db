from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class CasefilesConfig(AppConfig):
    name = "casefiles"
    verbose_name = _("Cases and audit")

    def ready(self) -> None:
        from . import checks, signals  # noqa: F401  (registers checks and auth receivers)
