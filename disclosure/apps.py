from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class DisclosureConfig(AppConfig):
    name = "disclosure"
    verbose_name = _("Disclosure")

    def ready(self) -> None:
        from . import panels

        panels.register()  # a link to the case's packages on its page
