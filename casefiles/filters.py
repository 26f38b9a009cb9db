import django_filters
from django.contrib.auth import get_user_model
from django.utils.translation import gettext_lazy as _

from .models import AuditEntry, Case

# Actions recorded by this app; other apps add theirs with ``register_actions``.
AUDIT_ACTIONS: dict[str, str] = {
    "auth.login": _("Signed in"),
    "auth.login_failed": _("Failed sign-in"),
    "auth.logout": _("Signed out"),
    "case.create": _("Case opened"),
    "case.update": _("Case changed"),
    "case.view": _("Case viewed"),
    "membership.grant": _("Access granted"),
    "membership.change": _("Access changed"),
    "membership.revoke": _("Access revoked"),
    "audit.view": _("Audit log viewed"),
}


def register_actions(actions: dict[str, str]) -> None:
    AUDIT_ACTIONS.update(actions)


class AuditEntryFilter(django_filters.FilterSet):
    actor = django_filters.ModelChoiceFilter(
        label=_("Actor"), queryset=get_user_model().objects.order_by("username")
    )
    action = django_filters.ChoiceFilter(
        label=_("Action"), choices=lambda: sorted(AUDIT_ACTIONS.items())
    )
    case = django_filters.ModelChoiceFilter(
        label=_("Case"), queryset=Case.objects.order_by("reference")
    )
    at = django_filters.DateFromToRangeFilter(
        label=_("Date"),
        widget=django_filters.widgets.DateRangeWidget(attrs={"type": "date"}),
    )

    class Meta:
        model = AuditEntry
        fields = ["actor", "action", "case", "at"]
