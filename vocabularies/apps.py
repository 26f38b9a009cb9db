from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class VocabulariesConfig(AppConfig):
    name = "vocabularies"
    verbose_name = _("Vocabularies")
