"""A sealed field of an antemortem profile moved or altered in the database: its reveal
is refused, audited with what was found, and the profile's pages say so."""

import pytest
from django.urls import reverse

from casefiles.models import AuditEntry

pytestmark = pytest.mark.django_db


def test_a_tampered_antemortem_profile_is_refused_audited_and_warned_of(client, cast, missing):
    from missing.models import Profile

    profile = Profile.objects.get(person=missing.victim)
    Profile.objects.filter(pk=profile.pk).update(  # one sealed field moved to another
        enc_marks=profile.enc_physical
    )
    client.force_login(cast.lead)
    url = reverse("missing:profile", args=[cast.case.reference, missing.victim.code])
    response = client.post(url)
    assert response.status_code == 409
    text = response.content.decode()
    assert "failed its integrity check" in text and "Tall, slim" not in text
    entry = AuditEntry.objects.get(action="missing.profile_reveal_failed")
    assert (entry.details["table"], entry.details["column"]) == ("missing_profile", "enc_marks")
    assert entry.details["row"] == str(profile.pk)
    assert not AuditEntry.objects.filter(action="missing.profile_reveal").exists()
    # The edit page, which opens the profile to fill its form, says so too.
    edit = client.get(
        reverse("missing:profile_edit", args=[cast.case.reference, missing.victim.code]),
        follow=True,
    )
    assert "failed its integrity check" in edit.content.decode()
