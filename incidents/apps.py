from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class IncidentsConfig(AppConfig):
    name = "incidents"
    verbose_name = _("Incidents")

    def ready(self) -> None:
        from . import panels

        panels.register()  # the case's link to its incidents
