"""The vocabularies in the Django admin: system admins add terms, relabel them and retire
them, never delete one or change its code (records name a term for good). A vocabulary
holds no case content, so its labels and codes may be searched and filtered."""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.translation import gettext_lazy as _

from casefiles.access import account_of
from casefiles.admin_policy import AtharAdminMixin

from .models import Term
from .services import terms


@admin.register(Term)
class TermAdmin(AtharAdminMixin, admin.ModelAdmin):
    list_display = ["code", "scheme", "label_en", "label_ar", "parent", "since", "retired_at"]
    list_filter = ["scheme"]
    list_select_related = ["parent"]
    search_fields = ["code", "label_en", "label_ar"]
    fields = ["scheme", "code", "parent", "label_en", "label_ar", "since", "retired_at"]
    raw_id_fields = ["parent"]
    actions = ["retire"]

    def changeform_view(self, request, object_id=None, form_url="", extra_context=None):
        # Saving calls a service that commits in its own durable transaction with its
        # audit entry (as casefiles' MembershipAdmin does): not inside the admin's.
        return self._changeform_view(  # type: ignore[attr-defined]  # Django's, unstubbed
            request, object_id, form_url, extra_context
        )

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> list[str]:
        if obj is None:
            return ["since", "retired_at"]
        return ["scheme", "code", "parent", "since", "retired_at"]

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False  # retired, never deleted

    def save_model(self, request: HttpRequest, obj: Term, form: Any, change: bool) -> None:
        if change:
            saved = terms.relabel_term(
                actor=account_of(request), term=obj, label_en=obj.label_en, label_ar=obj.label_ar
            )
        else:
            saved = terms.add_term(
                actor=account_of(request),
                scheme=obj.scheme,
                code=obj.code,
                label_en=obj.label_en,
                label_ar=obj.label_ar,
                parent=obj.parent,
            )
        obj.pk = saved.pk

    @admin.action(description=_("Retire the selected terms"))
    def retire(self, request: HttpRequest, queryset: QuerySet[Term]) -> None:
        codes = terms.retire_terms(actor=account_of(request), terms=queryset)
        self.message_user(request, _("Retired: %s") % (", ".join(codes) or "—"), messages.SUCCESS)
