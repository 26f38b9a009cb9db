"""Antemortem profiles and who was present at an identification are sealed with the field
keys: ``rotate_keys`` re-encrypts them, so the old key can be removed without losing one."""

import secrets

import pytest
from django.conf import settings
from django.core.management import call_command
from django.test import override_settings
from django.urls import reverse

from missing.models import Antemortem, Candidate, Profile
from people import crypto

from .conftest import FAMILY_CONTACT, MARKS, identify_first

pytestmark = pytest.mark.django_db

PRESENT = "The case lead, the mother, her brother"


class _Out:
    text = ""

    def write(self, s):
        self.text += s

    def flush(self):
        pass


def test_after_rotation_the_old_key_can_be_removed_and_profiles_still_open(client, cast, missing):
    session, candidate = identify_first(cast, missing, present=PRESENT)
    new = ("new", secrets.token_bytes(32))
    with override_settings(FIELD_KEYS=[new, *settings.FIELD_KEYS]):
        call_command("rotate_keys", stdout=(out := _Out()))

    with override_settings(FIELD_KEYS=[new]):  # the old key is gone
        profile = Profile.objects.get(pk=missing.profile.pk)
        assert profile.open() == Antemortem(
            physical="Tall, slim",
            clothing="Grey jacket",
            marks=MARKS,
            dental="Chipped incisor",
            last_seen_text="Airport road checkpoint",
            detainee_number="4417",
            family_contact=FAMILY_CONTACT,
        )
        assert crypto.key_id_of(profile.enc_family_contact) == "new"
        assert Candidate.objects.get(pk=candidate.pk).open_present() == PRESENT
        client.force_login(cast.investigator)
        page = client.post(
            reverse("missing:profile", args=[cast.case.reference, missing.victim.code])
        )
        assert page.status_code == 200 and FAMILY_CONTACT in page.content.decode()
        client.force_login(cast.lead)
        page = client.get(reverse("missing:session", args=[cast.case.reference, session.pk]))
        assert page.status_code == 200 and PRESENT in page.content.decode()
    assert "missing.Profile: 1 rows" in out.text
    assert "missing.Candidate: 3 rows" in out.text


def test_a_second_rotation_re_encrypts_nothing_more(cast, missing):
    from people.services import rotate_field_keys

    identify_first(cast, missing, present=PRESENT)
    new = ("new", secrets.token_bytes(32))
    with override_settings(FIELD_KEYS=[new, *settings.FIELD_KEYS]):
        first = rotate_field_keys()
        again = rotate_field_keys()
    # 2 people + 1 profile + 3 candidates (the two not identified had nothing sealed yet)
    assert first.reencrypted == 6
    assert again.reencrypted == 0 and again.rows == first.rows
    with override_settings(FIELD_KEYS=[new]):
        assert Profile.objects.get(pk=missing.profile.pk).open().marks == MARKS
