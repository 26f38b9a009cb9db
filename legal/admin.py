"""The catalogue of crimes and elements in the Django admin: admins add elements and
retire them, never delete or rewrite one (links name them for good). It holds no case
content."""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.translation import gettext_lazy as _

from casefiles.access import account_of
from casefiles.admin_policy import AtharAdminMixin

from .models import Crime, LegalElement
from .services import catalogue


@admin.register(Crime)
class CrimeAdmin(AtharAdminMixin, admin.ModelAdmin):
    list_display = ["code", "article", "label_en", "jurisdiction", "since", "retired_at"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # crimes come with a catalogue version (a migration)

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(LegalElement)
class LegalElementAdmin(AtharAdminMixin, admin.ModelAdmin):
    list_display = ["code", "crime", "label_en", "since", "retired_at"]
    list_select_related = ["crime"]
    fields = ["crime", "code", "label_en", "label_ar", "order"]
    actions = ["retire"]

    def changeform_view(self, request, object_id=None, form_url="", extra_context=None):
        # Saving calls a service that commits in its own durable transaction with its
        # audit entry (as casefiles' MembershipAdmin does): not inside the admin's.
        return self._changeform_view(  # type: ignore[attr-defined]  # Django's, unstubbed
            request, object_id, form_url, extra_context
        )

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return obj is None  # the list and the add form; an element is never rewritten

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def save_model(self, request: HttpRequest, obj: LegalElement, form: Any, change: bool) -> None:
        saved = catalogue.add_element(
            actor=account_of(request),
            crime=obj.crime,
            code=obj.code,
            label_en=obj.label_en,
            label_ar=obj.label_ar,
            order=obj.order,
        )
        obj.pk = saved.pk

    @admin.action(description=_("Retire the selected elements"))
    def retire(self, request: HttpRequest, queryset: QuerySet[LegalElement]) -> None:
        codes = catalogue.retire_elements(actor=account_of(request), elements=queryset)
        self.message_user(request, _("Retired: %s") % (", ".join(codes) or "—"), messages.SUCCESS)
