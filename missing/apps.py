from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class MissingConfig(AppConfig):
    name = "missing"
    verbose_name = _("The missing")
