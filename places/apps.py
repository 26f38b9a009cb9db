from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class PlacesConfig(AppConfig):
    name = "places"
    verbose_name = _("Places")

    def ready(self) -> None:
        from django.db.models.signals import post_migrate

        from evidence.filters import register_gallery_filters
        from evidence.hooks import when_positions_recorded

        from . import gallery, locating, panels

        panels.register()  # an item's nearest town
        when_positions_recorded(locating.locate_within)  # at intake
        register_gallery_filters(gallery.gallery_filters, content=gallery.CONTENT)
        post_migrate.connect(_keep_towns_index, sender=self, dispatch_uid="athar_towns_index")


def _keep_towns_index(**kwargs: object) -> None:
    from . import geocode

    geocode.keep_index()
