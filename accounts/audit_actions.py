"""The audit actions the accounts app records (collected by casefiles.audit_actions)."""

from django.utils.translation import gettext_lazy as _

ACTIONS = {
    "auth.login": _("Signed in"),
    "auth.login_failed": _("Failed sign-in"),
    "auth.logout": _("Signed out"),
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
    "auth.preferences": _("Own preferences changed"),
}
