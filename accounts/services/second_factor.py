"""Second factors: an authenticator app set up and confirmed, and backup codes."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _
from django_otp.plugins.otp_static.models import StaticDevice, StaticToken
from django_otp.plugins.otp_totp.models import TOTPDevice

from casefiles import audit

from .. import twofactor
from .enrolment import _usable_enrolment_codes

if TYPE_CHECKING:
    from django.contrib.auth.models import User as Account


def start_totp_enrolment(*, user: Account, device_id: int | None = None) -> TOTPDevice:
    """The unconfirmed authenticator-app device of this enrolment (``device_id``, kept in
    the signing-in session), or a new one.

    Each enrolment gets its own key, and starting one discards the others: a key shown
    to whoever once typed the password never becomes the key the user confirms later.
    """
    with transaction.atomic(durable=True):
        device = TOTPDevice.objects.filter(pk=device_id, user=user, confirmed=False).first()
        if device is None:
            TOTPDevice.objects.filter(user=user, confirmed=False).delete()
            device = TOTPDevice.objects.create(user=user, name="app", confirmed=False)
    return device


def _new_backup_codes(user: Account) -> list[str]:
    StaticDevice.objects.filter(user=user).delete()
    device = StaticDevice.objects.create(user=user, name=twofactor.BACKUP_DEVICE_NAME)
    codes = [StaticToken.random_token() for _ in range(settings.ATHAR_BACKUP_CODES)]
    StaticToken.objects.bulk_create(StaticToken(device=device, token=c) for c in codes)
    return codes


class EnrolmentCodeSpent(ValidationError):
    """The enrolment code was used or replaced since it was entered, or it expired."""


def confirm_totp_device(
    *,
    user: Account,
    device: TOTPDevice,
    code: str,
    enrolment_code: int,
    new_password: str | None = None,
) -> list[str]:
    """Confirm an authenticator app with a code it shows; returns fresh backup codes.

    ``enrolment_code``, the id of the one the user entered, is spent in the same
    transaction: the device is confirmed only if it was still unused and unexpired.
    At the end of a recovery, ``new_password`` (the hash of the password the user chose
    after entering their recovery code) becomes the account's password in that same
    transaction: a recovery is done whole or not at all, and its code serves once.
    """
    if device.user_id != user.pk or device.confirmed:
        raise ValidationError(_("This enrolment is no longer valid; start again."))
    with transaction.atomic(durable=True):
        device = TOTPDevice.objects.select_for_update().get(pk=device.pk)
        if not device.verify_token(re.sub(r"\s+", "", code or "")):
            raise ValidationError(_("The code is wrong or has expired."))
        spent = (
            _usable_enrolment_codes(user)
            .filter(pk=enrolment_code, recovery=new_password is not None)
            .update(used_at=timezone.now())
        )
        if spent != 1:
            raise EnrolmentCodeSpent(
                _("The enrolment code is no longer valid; ask an admin for a new one.")
            )
        if new_password is not None:
            type(user).objects.filter(pk=user.pk).update(password=new_password)
            user.password = new_password  # login() keys the session to the new password
            audit.record(user, "auth.password_recover_use", target=user)
        device.confirmed = True
        device.save(update_fields=["confirmed"])
        codes = _new_backup_codes(user)
        audit.record(user, "auth.2fa_enrol", target=user, device="totp")
    return codes


def regenerate_backup_codes(*, user: Account) -> list[str]:
    """Replace the user's backup codes; the old ones stop working at once."""
    with transaction.atomic(durable=True):
        codes = _new_backup_codes(user)
        audit.record(user, "auth.backup_codes_renew", target=user)
    return codes
