from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class MissingConfig(AppConfig):
    name = "missing"
    verbose_name = _("The missing")

    def ready(self) -> None:
        from people import hooks, sealed

        from . import panels
        from .models import PROTECTED_FIELDS, Candidate, Profile
        from .services.missing import keep_status_change

        panels.register()  # the case's link to its missing people
        # What rotate_keys re-encrypts here: the antemortem profile, who was present.
        sealed.register(Profile, [f"enc_{n}" for n in PROTECTED_FIELDS])
        sealed.register(Candidate, ["enc_present"], blank=["enc_present"])
        # Every change of a victim's status, wherever made, kept in the profile's history.
        hooks.when_victim_status_changed(keep_status_change)
