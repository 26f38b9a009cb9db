"""Idle timeout, absolute lifetime, the list of a user's sessions, signing out everywhere."""

import pytest
from django.urls import reverse

from accounts.middleware import SESSION_SEEN, SESSION_STARTED
from accounts.models import UserSession
from casefiles.models import AuditEntry
from tests.conftest import VerifiedClient

pytestmark = pytest.mark.django_db


def _age(client, **seconds_ago):
    session = client.session
    for key, ago in seconds_ago.items():
        session[key] = session[key] - ago
    session.save()


def _signed_in(client):
    return client.get(reverse("casefiles:case_list")).status_code == 200


def test_the_idle_timeout_defaults_to_30_minutes(settings):
    assert settings.ATHAR_SESSION_IDLE_SECONDS == 30 * 60


def test_an_idle_session_ends_and_the_end_is_audited(client, settings, cast):
    client.force_login(cast.lawyer)
    assert _signed_in(client)
    _age(client, **{SESSION_SEEN: settings.ATHAR_SESSION_IDLE_SECONDS - 120})
    assert _signed_in(client)  # activity within the limit keeps it going
    _age(client, **{SESSION_SEEN: settings.ATHAR_SESSION_IDLE_SECONDS + 1})
    assert not _signed_in(client)
    entry = AuditEntry.objects.get(action="auth.session_end")
    assert (entry.actor, entry.details) == (cast.lawyer, {"reason": "idle"})
    assert UserSession.objects.get(user=cast.lawyer).ended_at is not None


def test_a_session_ends_after_its_absolute_lifetime_even_when_busy(client, settings, cast):
    client.force_login(cast.lawyer)
    _age(client, **{SESSION_STARTED: settings.ATHAR_SESSION_MAX_SECONDS + 1})
    assert not _signed_in(client)
    entry = AuditEntry.objects.get(action="auth.session_end")
    assert entry.details == {"reason": "lifetime"}


def test_activity_is_recorded_at_most_once_a_minute(client, cast):
    client.force_login(cast.lawyer)
    client.get(reverse("casefiles:case_list"))
    before = UserSession.objects.get().last_seen_at
    client.get(reverse("casefiles:case_list"))
    assert UserSession.objects.get().last_seen_at == before
    _age(client, **{SESSION_SEEN: 61})
    client.get(reverse("casefiles:case_list"))
    assert UserSession.objects.get().last_seen_at > before


def test_sign_out_everywhere_ends_the_other_sessions_and_keeps_this_one(cast):
    phone, laptop, here = VerifiedClient(), VerifiedClient(), VerifiedClient()
    for c in (phone, laptop, here):
        c.force_login(cast.lawyer)
    page = here.get(reverse("security")).content.decode()
    assert page.count("<tr><td>") == 3
    here.post(reverse("sign_out_everywhere"))
    assert _signed_in(here)
    assert not _signed_in(phone) and not _signed_in(laptop)
    assert UserSession.objects.filter(user=cast.lawyer, ended_at__isnull=True).count() == 1
    entry = AuditEntry.objects.get(action="auth.sessions_end")
    assert entry.details == {"count": 2}


def test_admins_list_a_users_sessions_and_end_them_all(cast):
    user = VerifiedClient()
    user.force_login(cast.lawyer)
    user.get(reverse("casefiles:case_list"), HTTP_USER_AGENT="Firefox/140")
    admin = VerifiedClient()
    admin.force_login(cast.admin)
    page = admin.get(reverse("manage_user", args=[cast.lawyer.pk])).content.decode()
    assert "Active sessions" in page and "No active sessions" not in page
    admin.post(reverse("manage_user_action", args=[cast.lawyer.pk, "end-sessions"]))
    assert not _signed_in(user)
    page = admin.get(reverse("manage_user", args=[cast.lawyer.pk])).content.decode()
    assert "No active sessions" in page


def test_signing_out_closes_the_recorded_session(client, cast):
    client.force_login(cast.lawyer)
    client.post(reverse("logout"))
    assert UserSession.objects.get(user=cast.lawyer).ended_at is not None
