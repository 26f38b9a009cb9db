"""The catalogue of crimes and their elements: admins add and retire, never delete or
rewrite (a link names an element for good)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone
from django.utils.translation import gettext as _

from casefiles import audit
from casefiles.access import is_system_admin

from ..models import Crime, LegalElement

if TYPE_CHECKING:
    from django.contrib.auth.models import User as Account

LOCAL_VERSION = "local"  # added here, not by a catalogue version's migration


def add_element(
    *, actor: Account, crime: Crime, code: str, label_en: str, label_ar: str, order: int = 0
) -> LegalElement:
    if not is_system_admin(actor):
        raise PermissionDenied(_("Only a system admin changes the catalogue."))
    if crime.retired_at is not None:
        raise ValidationError(_("This crime is retired: add elements to a current one."))
    element = LegalElement(
        crime=crime,
        code=code.strip(),
        label_en=label_en.strip(),
        label_ar=label_ar.strip(),
        order=order,
        since=LOCAL_VERSION,
    )
    element.full_clean()
    with transaction.atomic(durable=True):
        element.save()
        audit.record(
            actor, "legal.element_add", target=element, code=element.code, crime=crime.code
        )
    return element


def retire_elements(*, actor: Account, elements: QuerySet[LegalElement]) -> list[str]:
    """Retire these elements now: no new link may name them; their links stay and the
    matrix still shows them where a case links them. Returns the codes retired."""
    if not is_system_admin(actor):
        raise PermissionDenied(_("Only a system admin changes the catalogue."))
    with transaction.atomic(durable=True):
        current = list(elements.select_for_update().filter(retired_at__isnull=True))
        codes = sorted(e.code for e in current)
        if codes:
            LegalElement.objects.filter(pk__in=[e.pk for e in current]).update(
                retired_at=timezone.now()
            )
            audit.record(actor, "legal.element_retire", codes=codes)
    return codes
