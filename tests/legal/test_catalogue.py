"""The catalogue in the Django admin: a system admin adds an element and retires one,
both audited; no one changes or deletes an element; a lawyer cannot touch it."""

import pytest
from django.core.exceptions import PermissionDenied
from django.urls import reverse

from casefiles.models import AuditEntry
from legal.models import Crime, LegalElement
from legal.services import catalogue

pytestmark = pytest.mark.django_db


def test_an_admin_adds_and_retires_elements_in_the_admin(client, cast):
    client.force_login(cast.admin)
    crime = Crime.objects.get(code="RS-7-1-f")
    response = client.post(
        reverse("admin:legal_legalelement_add"),
        {
            "crime": crime.pk,
            "code": "RS-7-1-f.local-1",
            "label_en": "The pain was inflicted in an official place of detention.",
            "label_ar": "أُلحق الألم في مكان احتجاز رسمي.",
            "order": 9,
        },
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    added = LegalElement.objects.get(code="RS-7-1-f.local-1")
    assert added.since == catalogue.LOCAL_VERSION
    assert AuditEntry.objects.filter(action="legal.element_add").exists()
    response = client.post(
        reverse("admin:legal_legalelement_changelist"),
        {"action": "retire", "_selected_action": [added.pk]},
    )
    assert response.status_code == 302
    added.refresh_from_db()
    assert added.retired_at is not None
    assert AuditEntry.objects.get(action="legal.element_retire").details["codes"] == [added.code]
    change = reverse("admin:legal_legalelement_change", args=[added.pk])
    assert client.post(change, {"label_en": "rewritten"}).status_code == 403
    delete = reverse("admin:legal_legalelement_delete", args=[added.pk])
    assert client.post(delete, {"post": "yes"}).status_code == 403
    assert LegalElement.objects.filter(pk=added.pk, label_en__startswith="The pain").exists()


def test_only_a_system_admin_changes_the_catalogue(cast):
    with pytest.raises(PermissionDenied):
        catalogue.retire_elements(actor=cast.lawyer, elements=LegalElement.objects.all())
    assert not LegalElement.objects.filter(retired_at__isnull=False).exists()
