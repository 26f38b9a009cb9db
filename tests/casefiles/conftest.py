import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey


@pytest.fixture
def key(settings):
    """A fresh checkpoint signing key, set as ATHAR_CHECKPOINT_KEY; the private key."""
    private = Ed25519PrivateKey.generate()
    settings.ATHAR_CHECKPOINT_KEY = private.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()
    return private
