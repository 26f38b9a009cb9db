"""Writes to accounts: second factors, enrolment codes, resets and recovery, sessions,
a user's own preferences.
One function per write, audited in its transaction; one module per concern, the public
names all here (``from accounts import services``)."""

from .enrolment import (
    code_needs_two_admins,
    find_enrolment_code,
    issue_enrolment_code,
    recovery_code_usable,
)
from .preferences import set_blur_graphic
from .resets import ask_second_factor_reset, decide_second_factor_reset, reset_second_factor
from .second_factor import (
    EnrolmentCodeSpent,
    confirm_totp_device,
    regenerate_backup_codes,
    start_totp_enrolment,
)
from .sessions import (
    close_user_session,
    deactivate_user,
    end_user_sessions,
    start_user_session,
    touch_user_session,
)

__all__ = [
    "EnrolmentCodeSpent",
    "ask_second_factor_reset",
    "close_user_session",
    "code_needs_two_admins",
    "confirm_totp_device",
    "deactivate_user",
    "decide_second_factor_reset",
    "end_user_sessions",
    "find_enrolment_code",
    "issue_enrolment_code",
    "recovery_code_usable",
    "regenerate_backup_codes",
    "reset_second_factor",
    "set_blur_graphic",
    "start_totp_enrolment",
    "start_user_session",
    "touch_user_session",
]
