import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from django.utils import timezone

from casefiles import checkpoints
from casefiles.models import SigningKey


@pytest.fixture
def key(db, settings):
    """A fresh checkpoint signing key, set as ATHAR_CHECKPOINT_KEY and already listed
    among the organisation's keys (as on an installation that has signed before), so that
    its first use adds no audit entry of its own; the private key. Its first use is
    tested in tests/casefiles/test_signing_keys.py."""
    private = Ed25519PrivateKey.generate()
    settings.ATHAR_CHECKPOINT_KEY = private.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()
    now = timezone.now()
    SigningKey.objects.create(
        public_key=checkpoints.public_pem(private.public_key()),
        fingerprint=checkpoints.fingerprint(private.public_key()),
        first_used_at=now,
        last_used_at=now,
    )
    return private


@pytest.fixture
def unlisted_key(db, settings):
    """A fresh ATHAR_CHECKPOINT_KEY that has never signed (not listed yet)."""
    private = Ed25519PrivateKey.generate()
    settings.ATHAR_CHECKPOINT_KEY = private.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()
    return private
