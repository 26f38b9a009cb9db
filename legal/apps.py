from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class LegalConfig(AppConfig):
    name = "legal"
    verbose_name = _("Legal review")

    def ready(self) -> None:
        from casefiles.reviewing import when_content_changes

        from . import panels
        from .services.review import reopen_within

        panels.register()  # the review of an item and of a testimony, the case's matrix
        when_content_changes(reopen_within)  # approved, then changed: back to review
