"""Second factors: TOTP apps and one-time backup codes (django-otp devices).

Every account needs a confirmed device to sign in. ``ATHAR_DEMO_MODE`` (development
only; settings refuse it in production) exempts the accounts ``seed_demo`` creates.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import qrcode
import qrcode.image.svg
from django.conf import settings
from django.db import transaction
from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe
from django_otp.plugins.otp_static.models import StaticDevice
from django_otp.plugins.otp_totp.models import TOTPDevice
from django_otp_webauthn.models import WebAuthnCredential

if TYPE_CHECKING:
    from django.contrib.auth.models import User as Account

TOTP_CODE = re.compile(r"^\d{6}$")
BACKUP_DEVICE_NAME = "backup"
# The accounts `seed_demo` creates (demo/story.py), named here so that the sign-in rule
# depends on no app above it; tests/demo signs each of them in with a password alone.
DEMO_USERNAMES = frozenset({"admin", "admin2", "lead", "investigator", "lawyer", "observer"})


def is_exempt(user: Account) -> bool:
    """Demo accounts in demo mode sign in with a password alone; nobody else does."""
    if not settings.ATHAR_DEMO_MODE or settings.PRODUCTION:
        return False
    return user.get_username() in DEMO_USERNAMES


def has_security_key(user: Account) -> bool:
    return WebAuthnCredential.objects.filter(user=user, confirmed=True).exists()


def has_confirmed_device(user: Account) -> bool:
    return (
        TOTPDevice.objects.filter(user=user, confirmed=True).exists()
        or has_security_key(user)
        or StaticDevice.objects.filter(user=user, confirmed=True, token_set__isnull=False).exists()
    )


def verify_code(user: Account, code: str) -> TOTPDevice | StaticDevice | None:
    """The device that accepts ``code`` (a 6-digit TOTP or a backup code), or None.

    Six digits are tried only against TOTP devices, anything else only against backup
    codes, so one kind of guess never spends the other kind's throttle. Devices are
    locked while checked: the same code cannot be accepted twice concurrently. A TOTP
    code is refused once its time step or an earlier one has been used (django-otp
    keeps ``last_t``); a backup code is deleted when used.
    """
    code = re.sub(r"\s+", "", code or "").lower()
    if not code:
        return None
    model = TOTPDevice if TOTP_CODE.match(code) else StaticDevice
    with transaction.atomic():
        for device in model.objects.select_for_update().filter(user=user, confirmed=True):
            if device.verify_token(code):
                return device
    return None


def qr_svg(device: TOTPDevice) -> SafeString:
    """The enrolment QR code as inline SVG (no script, no style, nothing fetched)."""
    image = qrcode.make(device.config_url, image_factory=qrcode.image.svg.SvgPathImage, box_size=8)
    svg = image.to_string(encoding="unicode")
    # qrcode's SVG is generated from the URL alone and carries no markup of ours.
    return format_html('<div class="qr" role="img">{}</div>', mark_safe(svg))  # noqa: S308
