"""The audit actions the incidents app records (collected by casefiles.audit_actions)."""

from django.utils.translation import gettext_lazy as _

ACTIONS = {
    "incident.create": _("Incident recorded"),
    "incident.update": _("Incident changed"),
    "incident.act_add": _("Act added to an incident"),
    "incident.act_remove": _("Act removed from an incident"),
    "incident.perpetrator_add": _("Perpetrator added to an act"),
    "incident.link": _("Record linked to an incident"),
    "incident.unlink": _("Record unlinked from an incident"),
    "incident.view": _("Incident viewed"),
    "incident.list": _("Incidents listed"),
    "incident.timeline": _("Case timeline viewed"),
    "incident.map": _("Case map viewed"),
}
