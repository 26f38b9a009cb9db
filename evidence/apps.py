from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class EvidenceConfig(AppConfig):
    name = "evidence"
    verbose_name = _("Evidence")

    def ready(self) -> None:
        from . import panels

        panels.register()  # its parts of the case, person and testimony pages
