from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class PlacesConfig(AppConfig):
    name = "places"
    verbose_name = _("Places")

    def ready(self) -> None:
        from . import panels

        panels.register()  # an item's nearest town
