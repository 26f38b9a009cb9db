from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class MissingConfig(AppConfig):
    name = "missing"
    verbose_name = _("The missing")

    def ready(self) -> None:
        from . import panels

        panels.register()  # the case's link to its missing people
