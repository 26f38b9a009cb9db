import django_filters
from django import forms
from django.contrib.auth import get_user_model
from django.utils.translation import gettext_lazy as _

from .models import AuditEntry, Case


class AnyYesNo(forms.NullBooleanSelect):
    """Any / Yes / No for a yes-or-no filter: Django's own first choice reads "Unknown",
    as if it were a value of the field rather than no filter at all."""

    def __init__(self, attrs=None):
        super().__init__(attrs)
        # "Any" sends nothing, as the other filters' blank choice does: no filter chosen.
        self.choices = [("", _("Any")), ("true", _("Yes")), ("false", _("No"))]

    def format_value(self, value):
        # A list, as every other select gives: Django's own returns a bare string, which
        # the options are then matched against as a substring, so "" (Any) was taken as
        # chosen in "true" and the page showed Any while filtering by Yes.
        chosen = super().format_value(value)
        return [""] if chosen == "unknown" else [chosen]


# Actions recorded by this app; other apps add theirs with ``register_actions``.
AUDIT_ACTIONS: dict[str, str] = {
    "auth.login": _("Signed in"),
    "auth.login_failed": _("Failed sign-in"),
    "auth.logout": _("Signed out"),
    "case.create": _("Case opened"),
    "case.update": _("Case changed"),
    "case.view": _("Case viewed"),
    "membership.grant": _("Access granted"),
    "membership.grant_ask": _("Access grant waiting for a second admin"),
    "membership.grant_refused": _("Access grant refused by a second admin"),
    "membership.grant_cancelled": _("Access grant withdrawn"),
    "membership.change": _("Access changed"),
    "membership.revoke": _("Access revoked"),
    "audit.view": _("Audit log viewed"),
    "audit.export": _("Audit log exported"),
    "audit.view_target": _("Access history viewed"),
    "audit.checkpoint": _("Audit checkpoint signed"),
    "audit.bind_existing": _("Existing records bound into the audit chain"),
    "audit.guard_missing": _("Database guard found missing"),
    "auth.password_ok": _("Password accepted"),
    "auth.second_factor_failed": _("Wrong second-factor code"),
    "auth.2fa_enrol": _("Second factor set up"),
    "auth.2fa_reset": _("Second factor reset"),
    "auth.2fa_reset_ask": _("Second factor reset asked"),
    "auth.2fa_reset_refused": _("Second factor reset refused"),
    "auth.2fa_reset_cancelled": _("Second factor reset withdrawn"),
    "auth.enrolment_code_issue": _("Enrolment code issued"),
    "auth.enrolment_code_failed": _("Wrong enrolment code"),
    "auth.password_recover_ask": _("Password recovery asked"),
    "auth.password_recover_approve": _("Password recovery approved"),
    "auth.password_recover_refused": _("Password recovery refused"),
    "auth.password_recover_cancelled": _("Password recovery withdrawn"),
    "auth.recovery_code_issue": _("Recovery code issued"),
    "auth.password_recover_start": _("Recovery code accepted"),
    "auth.password_recover_failed": _("Wrong recovery code"),
    "auth.password_recover_choose": _("New password chosen after recovery"),
    "auth.password_recover_use": _("Password recovered"),
    "auth.backup_codes_renew": _("Backup codes renewed"),
    "auth.session_end": _("Session ended"),
    "auth.sessions_end": _("Signed out everywhere"),
    "user.deactivate": _("Account deactivated"),
    "user.create": _("Account created"),
    "user.change": _("Account changed"),
    "access.request": _("Access requested"),
    "access.approve": _("Access request approved"),
    "access.refuse": _("Access request refused"),
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
    target_type = django_filters.CharFilter(label=_("Object type"), help_text="app.model")
    target_id = django_filters.CharFilter(label=_("Object id"))
    at = django_filters.DateFromToRangeFilter(
        label=_("Date"),
        widget=django_filters.widgets.DateRangeWidget(attrs={"type": "date"}),
    )

    class Meta:
        model = AuditEntry
        fields = ["actor", "action", "case", "target_type", "target_id", "at"]
