from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class AccountsConfig(AppConfig):
    name = "accounts"
    verbose_name = _("Accounts")

    def ready(self) -> None:
        from casefiles import panels

        from . import home, signals  # noqa: F401  (signals: the sign-in receivers)

        panels.register_panel("admin_home", home.pending_resets)
