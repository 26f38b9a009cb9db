"""The organisation's signing keys: one fingerprint (the documented openssl line), the
keys listed on a page, at /.well-known/athar-signing-keys and by a command, and a
rotation that keeps the old key listed with its dates."""

import subprocess

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from casefiles import checkpoints


def test_the_fingerprint_is_what_the_documented_openssl_command_prints(tmp_path):
    public = Ed25519PrivateKey.generate().public_key()
    (tmp_path / "public-key.pem").write_text(checkpoints.public_pem(public))
    result = subprocess.run(
        ["sh", "-c", checkpoints.FINGERPRINT_COMMAND],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    )
    printed = result.stdout.split()[0]
    assert checkpoints.fingerprint(public) == printed
    assert checkpoints.fingerprint(checkpoints.public_pem(public)) == printed
    assert len(printed) == 64 and printed == printed.lower()
    # Not the SHA-256 of the 32 raw bytes, the other definition the project once had.
    import hashlib

    assert printed != hashlib.sha256(public.public_bytes_raw()).hexdigest()
