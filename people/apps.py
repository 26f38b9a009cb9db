from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class PeopleConfig(AppConfig):
    name = "people"
    verbose_name = _("People and testimony")

    def ready(self) -> None:
        from casefiles.filters import register_actions
        from casefiles.panels import register_panel

        register_panel("case_links", _case_link, order=20)

        register_actions(
            {
                "people.register": _("Person registered"),
                "people.add_role": _("Role added to a person"),
                "people.relate": _("Relation between people recorded"),
                "people.view": _("Person viewed"),
                "people.reveal_identity": _("Identity revealed"),
                "people.protection_change": _("Protection level changed"),
                "people.protection_change_refused": _("Protection level change refused"),
                "people.reveal_refused": _("Identity reveal refused by protection level"),
                "people.name_lookup": _("Name looked up"),
                "people.rotate_keys": _("Identity keys rotated"),
                "people.export": _("People exported"),
                "consent.record": _("Consent recorded"),
                "consent.withdraw": _("Consent withdrawn"),
                "testimony.create": _("Testimony logged"),
                "testimony.view": _("Testimony viewed"),
                "testimony.revise": _("Testimony revised"),
                "testimony.submit": _("Testimony submitted"),
                "testimony.approve": _("Testimony approved"),
                "testimony.return": _("Testimony returned"),
            }
        )


def _case_link(context, case):
    from django.urls import reverse
    from django.utils.html import format_html
    from django.utils.translation import gettext as _

    url = reverse("people:people_list", args=[case.reference])
    return format_html('<p><a href="{}">{}</a></p>', url, _("People and testimony"))
