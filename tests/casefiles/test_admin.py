import pytest
from django.urls import reverse

from casefiles.models import AuditEntry, Membership
from tests.factories import UserFactory
from tests.html import shows

pytestmark = pytest.mark.django_db


def test_granting_access_in_the_django_admin_goes_through_the_audited_service(
    client, cast, other_case
):
    client.force_login(cast.admin)
    response = client.post(
        reverse("admin:casefiles_membership_add"),
        {
            "user": cast.lawyer.pk,
            "case": other_case.pk,
            "role": "lawyer",
            "expires_at_0": "",
            "expires_at_1": "",
        },
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    m = Membership.objects.get(case=other_case, user=cast.lawyer)
    assert m.granted_by == cast.admin
    entry = AuditEntry.objects.get(action="membership.grant")
    assert (entry.actor, entry.target_id) == (cast.admin, str(m.pk))


def test_the_admin_form_refuses_a_role_the_user_may_not_hold_and_keeps_the_input(
    client, cast, other_case
):
    client.force_login(cast.admin)
    response = client.post(
        reverse("admin:casefiles_membership_add"),
        {"user": cast.observer.pk, "case": other_case.pk, "role": "investigator"},
    )
    assert response.status_code == 200
    assert "needs an account in the group" in response.content.decode()
    assert response.context["adminform"].form["role"].value() == "investigator"
    assert not Membership.objects.filter(case=other_case).exists()


def test_revoking_in_the_admin_is_audited(client, cast):
    client.force_login(cast.admin)
    m = Membership.objects.get(user=cast.observer)
    client.post(
        reverse("admin:casefiles_membership_changelist"),
        {"action": "revoke", "_selected_action": [m.pk]},
    )
    m.refresh_from_db()
    assert m.revoked_at is not None
    assert AuditEntry.objects.filter(action="membership.revoke", target_id=str(m.pk)).exists()


def test_audit_entries_are_read_only_in_the_admin(client, cast):
    client.force_login(cast.lawyer)  # records a login entry
    client.force_login(cast.admin)
    entry = AuditEntry.objects.first()
    assert entry is not None
    assert client.get(reverse("admin:casefiles_auditentry_add")).status_code == 403
    change = client.get(reverse("admin:casefiles_auditentry_change", args=[entry.pk]))
    assert change.status_code == 200
    assert b'name="_save"' not in change.content
    assert client.get(
        reverse("admin:casefiles_auditentry_delete", args=[entry.pk])
    ).status_code in (
        302,
        403,
    )
    assert AuditEntry.objects.filter(pk=entry.pk).exists()


def test_the_admin_shows_a_case_without_its_summary(client, cast):
    client.force_login(cast.admin)
    response = client.get(reverse("admin:casefiles_case_change", args=[cast.case.pk]))
    assert response.status_code == 200
    assert cast.case.summary not in response.content.decode()


def test_a_user_outside_the_admin_group_cannot_manage_access(client, cast):
    staff = UserFactory(is_staff=True)
    client.force_login(staff)
    assert client.get(reverse("admin:casefiles_membership_add")).status_code == 403


def test_second_factor_devices_cannot_be_planted_through_the_django_admin():
    from django.contrib import admin
    from django_otp.plugins.otp_static.models import StaticDevice
    from django_otp.plugins.otp_totp.models import TOTPDevice

    assert not admin.site.is_registered(TOTPDevice)
    assert not admin.site.is_registered(StaticDevice)
    from django_otp_webauthn.models import WebAuthnCredential

    assert not admin.site.is_registered(WebAuthnCredential)


def test_changing_a_users_groups_in_the_django_admin_is_audited(client, cast):
    from django.contrib.auth.models import Group

    newcomer = UserFactory(username="newcomer")  # no case access yet
    client.force_login(cast.admin)
    url = reverse("admin:auth_user_change", args=[newcomer.pk])
    form = client.get(url).context["adminform"].form
    data = {k: v for k, v in form.initial.items() if v is not None and k != "password"}
    data.update(
        username=newcomer.username,
        is_active="on",
        groups=[Group.objects.get(name="Lawyer").pk],
        date_joined_0=newcomer.date_joined.strftime("%Y-%m-%d"),
        date_joined_1=newcomer.date_joined.strftime("%H:%M:%S"),
    )
    data.pop("date_joined", None)
    data.pop("last_login", None)
    data.pop("user_permissions", None)
    response = client.post(url, data)
    assert response.status_code == 302, response.context["adminform"].form.errors
    entry = AuditEntry.objects.get(action="user.change")
    assert (entry.actor, entry.target_id) == (cast.admin, str(newcomer.pk))
    assert "groups" in str(entry.details["change"]).lower()
    assert newcomer.groups.filter(name="Lawyer").exists()


def test_users_cannot_be_deleted_in_the_django_admin_even_by_a_superuser(client, cast):
    root = UserFactory(is_staff=True, is_superuser=True)
    client.force_login(root)
    url = reverse("admin:auth_user_delete", args=[cast.observer.pk])
    assert client.post(url, {"post": "yes"}).status_code in (302, 403)
    assert type(cast.observer).objects.filter(pk=cast.observer.pk).exists()


def test_an_admin_cannot_grant_themselves_access_to_a_case(client, cast, other_case):
    client.force_login(cast.admin)
    response = client.post(
        reverse("admin:casefiles_membership_add"),
        {"user": cast.admin.pk, "case": other_case.pk, "role": "observer"},
    )
    assert response.status_code == 200
    assert "Nobody can grant access to themselves" in response.content.decode()
    assert not Membership.objects.filter(user=cast.admin).exists()


def _change_membership(client, membership, **data):
    url = reverse("admin:casefiles_membership_change", args=[membership.pk])
    return client.post(url, {"expires_at_0": "", "expires_at_1": "", **data})


def test_changing_a_membership_in_the_django_admin_is_saved_and_audited(client, cast):
    membership = Membership.objects.get(user=cast.lawyer)
    client.force_login(cast.admin)
    response = _change_membership(
        client,
        membership,
        role="observer",
        expires_at_0="2099-01-31",
        expires_at_1="12:00:00",
    )
    assert response.status_code == 302, response.context["adminform"].form.errors
    membership.refresh_from_db()
    assert membership.role == "observer"
    assert membership.expires_at.year == 2099
    entry = AuditEntry.objects.get(action="membership.change")
    assert (entry.actor, entry.target_id) == (cast.admin, str(membership.pk))
    assert entry.details["changes"]["role"] == ["lawyer", "observer"]


def test_a_revoked_membership_is_shown_but_not_changed_in_the_django_admin(client, cast):
    from casefiles import services

    membership = Membership.objects.get(user=cast.lawyer)
    services.revoke_membership(actor=cast.lead, membership=membership)
    client.force_login(cast.admin)
    response = _change_membership(client, membership, role="observer")
    assert response.status_code == 403  # not a 500 from the service's refusal
    membership.refresh_from_db()
    assert membership.role == "lawyer" and membership.revoked_at is not None
    page = client.get(reverse("admin:casefiles_membership_change", args=[membership.pk]))
    assert page.status_code == 200 and not shows(page, "Save")  # no button, nor its label


def test_an_admin_cannot_change_their_own_membership(client, cast, case):
    from casefiles import services

    services.grant_membership(actor=cast.lead, case=case, user=cast.admin, role="observer")
    own = Membership.objects.get(user=cast.admin, case=case, revoked_at__isnull=True)
    client.force_login(cast.admin)
    response = _change_membership(client, own, role="observer", expires_at_0="2099-01-31")
    assert response.status_code == 200
    assert "Nobody can change their own access" in response.content.decode()
    own.refresh_from_db()
    assert own.expires_at is None
    assert not AuditEntry.objects.filter(action="membership.change").exists()


def test_the_membership_service_refuses_a_change_to_ones_own_access(cast, case):
    from django.core.exceptions import ValidationError

    from casefiles import services

    own = Membership.objects.get(user=cast.lead, case=case)
    with pytest.raises(ValidationError, match="their own access"):
        services.update_membership(actor=cast.lead, membership=own, role="lead", expires_at=None)


def _user_form_data(client, user, **changes):
    url = reverse("admin:auth_user_change", args=[user.pk])
    form = client.get(url).context["adminform"].form
    data = {k: v for k, v in form.initial.items() if v is not None and k in form.fields}
    data.pop("password", None)
    data.update(
        username=user.username,
        date_joined_0=user.date_joined.strftime("%Y-%m-%d"),
        date_joined_1=user.date_joined.strftime("%H:%M:%S"),
    )
    for key in ("date_joined", "last_login"):
        data.pop(key, None)
    data.update(changes)
    return url, data


def test_an_admin_cannot_make_anyone_a_superuser_or_widen_their_own_powers(client, cast):
    from django.contrib.auth.models import Group

    client.force_login(cast.admin)
    url, data = _user_form_data(client, cast.observer, is_superuser="on", is_active="on")
    assert client.post(url, data).status_code == 302
    cast.observer.refresh_from_db()
    assert not cast.observer.is_superuser

    investigator = Group.objects.get(name="Investigator")
    url, data = _user_form_data(
        client,
        cast.admin,
        is_superuser="on",
        is_active="on",
        is_staff="on",
        groups=[g.pk for g in cast.admin.groups.all()] + [investigator.pk],
    )
    assert client.post(url, data).status_code == 302
    cast.admin.refresh_from_db()
    assert not cast.admin.is_superuser
    assert not cast.admin.groups.filter(name="Investigator").exists()


def test_an_admin_cannot_change_a_superusers_account_or_password(client, cast):
    root = UserFactory(is_staff=True, is_superuser=True)
    client.force_login(cast.admin)
    password_url = reverse("admin:auth_user_password_change", args=[root.pk])
    response = client.post(
        password_url, {"password1": "a-new-long-pass-phrase", "password2": "a-new-long-pass-phrase"}
    )
    assert response.status_code == 403
    root.refresh_from_db()
    assert not root.check_password("a-new-long-pass-phrase")


NEW_PASSWORD = "a-new-long-pass-phrase"


def _set_password(client, user):
    url = reverse("admin:auth_user_password_change", args=[user.pk])
    return client.post(
        url, {"set_usable_password": "true", "password1": NEW_PASSWORD, "password2": NEW_PASSWORD}
    )


def test_no_admin_sets_the_password_of_an_account_with_case_access(client, cast):
    root = UserFactory(is_staff=True, is_superuser=True)
    for admin_user in (cast.admin, root):  # a superuser neither
        client.force_login(admin_user)
        url = reverse("admin:auth_user_password_change", args=[cast.lawyer.pk])
        response = client.get(url, follow=True)
        assert response.redirect_chain == [
            (reverse("admin:auth_user_change", args=[cast.lawyer.pk]), 302)
        ]
        assert "no administrator can set its password" in response.content.decode()
        response = _set_password(client, cast.lawyer)
        assert response.status_code == 302
        cast.lawyer.refresh_from_db()
        assert not cast.lawyer.check_password(NEW_PASSWORD)
    assert not AuditEntry.objects.filter(action="user.change").exists()


def test_a_deactivated_account_with_case_access_keeps_its_password_too(client, cast):
    type(cast.lawyer).objects.filter(pk=cast.lawyer.pk).update(is_active=False)
    client.force_login(cast.admin)
    _set_password(client, cast.lawyer)
    cast.lawyer.refresh_from_db()
    assert not cast.lawyer.check_password(NEW_PASSWORD)


def test_an_account_whose_access_ended_can_have_its_password_set_again(client, cast):
    from casefiles import services

    services.revoke_membership(actor=cast.lead, membership=Membership.objects.get(user=cast.lawyer))
    client.force_login(cast.admin)
    url = reverse("admin:auth_user_password_change", args=[cast.lawyer.pk])
    assert client.get(url).status_code == 200
    assert _set_password(client, cast.lawyer).status_code == 302
    cast.lawyer.refresh_from_db()
    assert cast.lawyer.check_password(NEW_PASSWORD)
    assert AuditEntry.objects.filter(action="user.change", target_id=str(cast.lawyer.pk)).exists()


def test_no_admin_changes_the_groups_of_an_account_with_case_access(client, cast):
    from django.contrib.auth.models import Group

    client.force_login(cast.admin)
    url, data = _user_form_data(
        client,
        cast.observer,
        is_active="on",
        groups=[Group.objects.get(name="Investigator").pk],
    )
    page = client.get(url)
    assert "groups" not in page.context["adminform"].form.fields
    assert "no administrator can set its password" in page.content.decode()
    assert client.post(url, data).status_code == 302
    assert not cast.observer.groups.exists()
    # Nor taken away: the lead's groups stay as they are.
    url, data = _user_form_data(client, cast.lead, is_active="on", groups=[])
    assert client.post(url, data).status_code == 302
    assert cast.lead.groups.filter(name="Investigator").exists()


def test_the_add_form_puts_a_new_account_in_no_group(client, cast):
    from django.contrib.auth.models import Group

    client.force_login(cast.admin)
    response = client.post(
        reverse("admin:auth_user_add"),
        {
            "username": "newcomer",
            "usable_password": "true",
            "password1": NEW_PASSWORD,
            "password2": NEW_PASSWORD,
            "groups": [Group.objects.get(name="Investigator").pk],
            "is_superuser": "on",
        },
    )
    assert response.status_code == 302
    created = type(cast.admin).objects.get(username="newcomer")
    assert not created.groups.exists()
    assert not created.is_superuser
