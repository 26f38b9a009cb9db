"""The bundled verifier's pure-Python Ed25519 signing (RFC 8032 §5.1.6), for witnesses
without Athar: the same bytes as OpenSSL and cryptography (Ed25519 is deterministic), keys
read from the PKCS#8 PEM that `openssl genpkey` and cryptography write."""

import subprocess

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from disclosure import verifier

# RFC 8032 §7.1, tests 1 to 3: secret key, public key, message, signature.
VECTORS = [
    (
        "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60",
        "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a",
        "",
        "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e06522490155"
        "5fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b",
    ),
    (
        "4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb",
        "3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c",
        "72",
        "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da"
        "085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00",
    ),
    (
        "c5aa8df43f9f837bedb7442f31dcb7b166d38535076f094b85ce3a2e0b4458f7",
        "fc51cd8e6218a1a38da47ed00230f0580816ed13ba3303ac5deb911548908025",
        "af82",
        "6291d657deec24024827e69c3abe01a30ce548a284743a445e3680d7db5ac3ac"
        "18ff9b538d16f290ae67f760984dc6594a7c15e9716ed28dc027beceea1ec40a",
    ),
]


@pytest.mark.parametrize(("secret", "public", "message", "signature"), VECTORS)
def test_the_rfc_8032_vectors(secret, public, message, signature):
    seed = bytes.fromhex(secret)
    assert verifier.ed25519_public(seed).hex() == public
    assert verifier.ed25519_sign(seed, bytes.fromhex(message)).hex() == signature


def test_signing_gives_openssl_s_and_cryptography_s_bytes(tmp_path):
    key = tmp_path / "witness-private.pem"
    subprocess.run(["openssl", "genpkey", "-algorithm", "ed25519", "-out", key], check=True)
    seed = verifier.private_key_from_pem(key.read_text())
    message = tmp_path / "message"
    message.write_bytes(b"cosignature/v1\ntime 1800000000\nathar/audit\n5\n" + b"ab" * 32)
    sign = ["openssl", "pkeyutl", "-sign", "-rawin", "-inkey", key, "-in", message]
    by_openssl = subprocess.run(sign, capture_output=True, check=True).stdout
    ours = verifier.ed25519_sign(seed, message.read_bytes())
    assert ours == by_openssl
    loaded = serialization.load_pem_private_key(key.read_bytes(), password=None)
    assert ours == loaded.sign(message.read_bytes())
    pub = subprocess.run(["openssl", "pkey", "-in", key, "-pubout"], capture_output=True, text=True)
    assert verifier.public_key_from_pem(pub.stdout) == verifier.ed25519_public(seed)


def test_a_key_cryptography_writes_is_read_and_signs_alike():
    key = Ed25519PrivateKey.generate()
    pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()
    seed = verifier.private_key_from_pem(pem)
    assert verifier.ed25519_sign(seed, b"a checkpoint") == key.sign(b"a checkpoint")


def test_what_is_not_an_unencrypted_ed25519_private_key_is_refused_in_words(tmp_path):
    key = Ed25519PrivateKey.generate()
    encrypted = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.BestAvailableEncryption(b"secret"),
    ).decode()
    public = key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    for text in (encrypted, public.decode(), "not a key"):
        with pytest.raises(verifier.Failure, match="not an unencrypted Ed25519 private key"):
            verifier.private_key_from_pem(text)
