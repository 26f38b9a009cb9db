"""Django admin for cases and memberships; audit entries are read-only here.

Every change goes through the services so it is validated and audited like any other.
An admin sees a case's reference and title (to manage access), never its summary.
"""

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.utils import unquote
from django.contrib.auth import get_user_model
from django.contrib.auth.admin import UserAdmin
from django.core.exceptions import PermissionDenied, ValidationError
from django.shortcuts import redirect
from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from django_otp.plugins.otp_static.models import StaticDevice
from django_otp.plugins.otp_totp.models import TOTPDevice
from django_otp_webauthn.models import WebAuthnCredential

from . import access, audit, services
from .admin_policy import AtharAdminMixin, adopt_registered_admins
from .models import AccessRequest, AuditCheckpoint, AuditEntry, Case, GrantRequest, Membership


class AtharModelAdmin(AtharAdminMixin, admin.ModelAdmin):
    """A model admin under the rule of ``admin_policy``: no lookup on case content."""


class ServiceSavedAdmin(AtharModelAdmin):
    """An admin whose saving calls a service that commits in its own durable transaction,
    with its audit entry: the admin's usual request-wide transaction would hold it open
    around it (Django refuses a durable block nested in another). The service is the
    whole write: the admin's own LogEntry follows it."""

    def changeform_view(self, request, object_id=None, form_url="", extra_context=None):
        return self._changeform_view(  # type: ignore[attr-defined]  # Django's, unstubbed
            request, object_id, form_url, extra_context
        )


class CaseAdminForm(forms.ModelForm):
    class Meta:
        model = Case
        fields = ["reference", "title", "status", "sensitivity", "jurisdiction"]


@admin.register(Case)
class CaseAdmin(ServiceSavedAdmin):
    form = CaseAdminForm
    list_display = ["reference", "title", "status", "sensitivity", "created_at"]
    list_filter = ["status", "sensitivity"]
    search_fields = ["reference", "title"]

    def get_readonly_fields(self, request, obj=None):
        return ["reference"] if obj else []

    def has_delete_permission(self, request, obj=None):
        return False

    def save_model(self, request, obj, form, change):
        data = {f: form.cleaned_data[f] for f in form.Meta.fields if f in form.cleaned_data}
        if change:
            data.pop("reference", None)
            # ``obj`` already holds the form's values: the service compares them with the
            # case as stored, or it would find nothing changed and save nothing.
            stored = Case.objects.get(pk=obj.pk)
            services.update_case(actor=request.user, case=stored, **data)
        else:
            case = services.create_case(actor=request.user, **data)
            obj.pk, obj._state.adding = case.pk, False


class MembershipAdminForm(forms.ModelForm):
    request_user = None  # set by MembershipAdmin.get_form

    class Meta:
        model = Membership
        fields = ["user", "case", "role", "expires_at"]

    def clean(self):
        data = super().clean() or {}
        role = data.get("role")
        if "user" in self.fields:  # adding: the user is chosen
            user = data.get("user")
            if user is not None and user == self.request_user:
                self.add_error(
                    "user", _("Nobody can grant access to themselves; ask for it instead.")
                )
        else:  # changing: the user is read-only
            user = self.instance.user
            if user == self.request_user:
                self.add_error(None, _("Nobody can change their own access; ask for it instead."))
        if user is not None and role:
            try:
                access.check_role_allowed(user, role)
            except ValidationError as exc:
                self.add_error("role", exc)
        expires_at = data.get("expires_at")
        if expires_at is not None and expires_at != self.instance.expires_at:
            if expires_at <= timezone.now():
                self.add_error("expires_at", _("The expiry must be in the future."))
        case = data.get("case") if "case" in self.fields else self.instance.case
        if user is not None and case is not None:
            pending = GrantRequest.objects.filter(
                user=user, case=case, outcome=GrantRequest.Outcome.PENDING
            )
            if pending.exists():
                self.add_error(
                    None,
                    _(
                        "A grant of access to this case for this user is already waiting "
                        "for a decision."
                    ),
                )
        return data


@admin.register(Membership)
class MembershipAdmin(ServiceSavedAdmin):
    form = MembershipAdminForm
    list_display = ["user", "case", "role", "granted_by", "granted_at", "expires_at", "revoked_at"]
    list_filter = ["role", "case"]
    list_select_related = ["user", "case", "granted_by"]
    search_fields = ["user__username", "case__reference"]
    actions = ["revoke"]

    def get_form(self, request, obj=None, change=False, **kwargs):
        form = super().get_form(request, obj, change, **kwargs)
        return type(form.__name__, (form,), {"request_user": request.user})

    def get_readonly_fields(self, request, obj=None):
        fixed = ["granted_by", "granted_at", "revoked_at", "revoked_by"]
        return ["user", "case", *fixed] if obj else fixed

    def has_delete_permission(self, request, obj=None):
        return False  # memberships are revoked, never deleted: they are history

    def has_change_permission(self, request, obj=None):
        # A revoked membership is history: shown, never changed (access is granted anew).
        if obj is not None and obj.revoked_at is not None:
            return False
        return super().has_change_permission(request, obj)

    def save_model(self, request, obj, form, change):
        data = form.cleaned_data
        # A grant that needs a second admin becomes a request another admin decides on
        # the app's page; nothing is saved here, and the message says so.
        result = services.grant_or_ask(
            actor=request.user,
            case=obj.case,
            user=obj.user,
            role=data["role"],
            expires_at=data.get("expires_at"),
            # The form has already copied the new values onto ``obj``: the service
            # compares them with the membership as stored.
            membership=Membership.objects.get(pk=obj.pk) if change else None,
        )
        if isinstance(result, GrantRequest):
            request._athar_grant_request = result
            if not change:
                obj.pk = None
            return
        obj.pk, obj._state.adding = result.pk, False

    def response_add(self, request, obj, post_url_continue=None):
        return self._pending_response(request) or super().response_add(
            request, obj, post_url_continue
        )

    def response_change(self, request, obj):
        return self._pending_response(request) or super().response_change(request, obj)

    def _pending_response(self, request):
        pending = getattr(request, "_athar_grant_request", None)
        if pending is None:
            return None
        self.message_user(
            request,
            _(
                "Not granted yet: this grant needs a second person. It waits for another "
                "admin's approval or the consent of the case's lead, on the Access requests "
                "page."
            ),
            messages.WARNING,
        )
        return redirect("access_requests")

    def log_addition(self, request, obj, message):
        if getattr(request, "_athar_grant_request", None) is None:
            super().log_addition(request, obj, message)

    def log_change(self, request, obj, message):
        if getattr(request, "_athar_grant_request", None) is None:
            super().log_change(request, obj, message)

    @admin.action(description=_("Revoke the selected memberships now"))
    def revoke(self, request, queryset):
        for membership in queryset.filter(revoked_at__isnull=True).select_related("case", "user"):
            services.revoke_membership(actor=request.user, membership=membership)
        self.message_user(request, _("Access revoked."), messages.SUCCESS)


@admin.register(AuditEntry)
class AuditEntryAdmin(AtharModelAdmin):
    list_display = ["seq", "at", "actor_label", "action", "target_type", "target_label", "case"]
    list_filter = ["action"]
    list_select_related = ["case"]
    search_fields = ["actor_label", "target_label", "action"]
    show_full_result_count = False

    def get_queryset(self, request):
        return AuditEntry.objects.visible_to(request.user)

    def get_exclude(self, request, obj=None):
        # A case's details are its content: shown to its members only (the digest the
        # entry's hash covers is shown instead).
        if obj is not None and obj.case_id is not None:
            if not Case.objects.visible_to(request.user).filter(pk=obj.case_id).exists():
                return ["details"]
        return []

    def get_readonly_fields(self, request, obj=None):
        return ["details_digest"]

    @admin.display(description=_("details SHA-256"))
    def details_digest(self, obj):
        return audit.details_sha256(obj.details)

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


class _ReadOnlyAdmin(AtharModelAdmin):
    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(AccessRequest)
class AccessRequestAdmin(_ReadOnlyAdmin):
    """Decided on the app's own page (access requests), where role and expiry are chosen."""

    list_display = ["user", "case", "status", "requested_at", "decided_by", "decided_at"]
    list_filter = ["status"]
    list_select_related = ["user", "case", "decided_by"]

    def get_queryset(self, request):
        return AccessRequest.objects.decidable_by(request.user)


@admin.register(AuditCheckpoint)
class AuditCheckpointAdmin(_ReadOnlyAdmin):
    list_display = ["size", "root", "origin", "created_at"]


# Second-factor devices change only through the audited services (enrolment at sign-in,
# an admin's reset on the user's page): django-otp's own admin pages would let an admin
# plant a device with a key they know, unaudited.
for _model in (TOTPDevice, StaticDevice, WebAuthnCredential):
    if admin.site.is_registered(_model):
        admin.site.unregister(_model)


def holds_case_access(user) -> bool:
    """Whether the account holds a membership in force (unrevoked, unexpired) in any case,
    whether the account is active or not (it can be made active again)."""
    return Membership.objects.filter(access.active_membership_q(), user=user).exists()


CASE_ACCESS_PASSWORD_REFUSED = _(
    "This account has access to a case: no administrator can set its password or change "
    "its groups. Revoke its access first."
)

HELD_ACCOUNT_ADMIN_REFUSED = _(
    "You created, enrolled or recovered this account: you cannot make it an admin or staff. "
    "Another admin decides."
)


def _powers(user) -> tuple[bool, bool]:
    """Whether ``user`` is staff, and whether a system admin (False, False for none)."""
    if user is None:
        return (False, False)
    admin = user.is_superuser or user.groups.filter(name=access.ADMIN_GROUP).exists()
    return (user.is_staff, admin)


class AuditedUserAdmin(AtharAdminMixin, UserAdmin):
    """Django's user admin, with every addition and change (groups, active, password,
    staff) also in the audit log: they are permission changes.

    An account with case access keeps its password and its groups here: one admin who
    could set them could sign in as a member (or make one a lead's peer) alone."""

    def log_addition(self, request, obj, message):
        super().log_addition(request, obj, message)
        audit.record(request.user, "user.create", target=obj, change=message)

    def log_change(self, request, obj, message):
        super().log_change(request, obj, message)
        audit.record(request.user, "user.change", target=obj, change=message)

    def has_delete_permission(self, request, obj=None):
        return False  # accounts are deactivated, never deleted: their history stays

    def has_change_permission(self, request, obj=None):
        # A superuser's account (its password included) is changed by a superuser only.
        if obj is not None and obj.is_superuser and not request.user.is_superuser:
            return False
        return super().has_change_permission(request, obj)

    def get_readonly_fields(self, request, obj=None):
        fixed = list(super().get_readonly_fields(request, obj))
        if not request.user.is_superuser:  # no superusers or raw permissions handed out
            fixed += ["is_superuser", "user_permissions"]
        if obj is not None and obj.pk == request.user.pk:  # nor one's own powers changed
            fixed += ["is_active", "is_staff", "groups"]
        elif obj is not None and holds_case_access(obj):
            fixed += ["groups"]
        if obj is not None and services.holds(request.user, obj):
            # An account one holds is not made an admin by one: it would approve one's asks.
            fixed += ["is_staff", "is_superuser"]
        return list(dict.fromkeys(fixed))

    def get_form(self, request, obj=None, change=False, **kwargs):
        form = super().get_form(request, obj, change=change, **kwargs)
        if obj is None or obj.pk == request.user.pk:
            return form
        case_access = holds_case_access(obj)
        held = services.holds(request.user, obj)
        if not case_access and not held:
            return form
        was_admin = _powers(obj)[1]

        class ChangeForm(form):  # type: ignore[valid-type, misc]  # the admin's form class
            def __init__(self, *args, **kwargs):
                super().__init__(*args, **kwargs)
                if case_access and "password" in self.fields:
                    self.fields["password"].help_text = CASE_ACCESS_PASSWORD_REFUSED
                if held and not was_admin and "groups" in self.fields:
                    groups = self.fields["groups"]
                    groups.help_text = HELD_ACCOUNT_ADMIN_REFUSED
                    groups.queryset = groups.queryset.exclude(name=access.ADMIN_GROUP)

        return ChangeForm

    def save_model(self, request, obj, form, change):
        before = type(obj).objects.filter(pk=obj.pk).first() if change else None
        request._athar_powers_before = _powers(before)
        super().save_model(request, obj, form, change)

    def save_related(self, request, form, formsets, change):
        super().save_related(request, form, formsets, change)
        user, before = form.instance, getattr(request, "_athar_powers_before", None)
        if before is None or user.pk == request.user.pk:
            return
        # Whatever a form let through, a held account does not leave here an admin or
        # staff it was not (the change view's transaction is rolled back).
        gained = [now and not was for now, was in zip(_powers(user), before, strict=True)]
        if any(gained) and services.holds(request.user, user):
            raise PermissionDenied(HELD_ACCOUNT_ADMIN_REFUSED)

    def user_change_password(self, request, id, form_url=""):
        user = self.get_object(request, unquote(id))
        if user is not None and user.pk != request.user.pk and holds_case_access(user):
            if self.has_change_permission(request, user):
                messages.error(request, CASE_ACCESS_PASSWORD_REFUSED)
                return redirect("admin:auth_user_change", user.pk)
            raise PermissionDenied
        return super().user_change_password(request, id, form_url)


User = get_user_model()
if admin.site.is_registered(User):
    admin.site.unregister(User)
admin.site.register(User, AuditedUserAdmin)

# Django's and third-party apps' admins (groups, tasks, sign-in attempts) under the rule.
adopt_registered_admins()
