from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class PeopleConfig(AppConfig):
    name = "people"
    verbose_name = _("People and testimony")

    def ready(self) -> None:
        from casefiles.panels import register_panel

        from . import sealed
        from .models import LATER_FIELDS, PROTECTED_FIELDS, Person
        from .services import reindex_names

        register_panel("case_links", _case_link, order=20)
        # A person's identity: sealed again by rotate_keys, with the name index rebuilt.
        sealed.register(
            Person,
            [f"enc_{n}" for n in PROTECTED_FIELDS],
            blank=[f"enc_{n}" for n in LATER_FIELDS],
            resealed=reindex_names,
        )


def _case_link(context, case):
    from django.urls import reverse
    from django.utils.html import format_html
    from django.utils.translation import gettext as _

    return format_html(
        '<p><a href="{}">{}</a> · <a href="{}">{}</a></p>',
        reverse("people:people_list", args=[case.reference]),
        _("People and testimony"),
        reverse("people:testimony_list", args=[case.reference]),
        _("Testimonies"),
    )
