"""A user's own preferences, changed by that user alone."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.db import transaction

from casefiles import audit

from ..models import Preferences

if TYPE_CHECKING:
    from django.contrib.auth.models import User as Account


def set_blur_graphic(*, actor: Account, blur_graphic: bool) -> bool:
    """ "Always blur graphic images", on or off, for ``actor``; audited when it changes.
    Returns whether it changed."""
    with transaction.atomic(durable=True):
        prefs, _ = Preferences.objects.select_for_update().get_or_create(user=actor)
        if prefs.blur_graphic == blur_graphic:
            return False
        prefs.blur_graphic = blur_graphic
        prefs.save(update_fields=["blur_graphic"])
        audit.record(actor, "auth.preferences", target=actor, blur_graphic=blur_graphic)
    return True
