"""Cosignatures of checkpoints by witnesses, in the C2SP tlog-cosignature form.

A witness is a key held by another organisation (a partner NGO, the recipient court).
It checks that a new checkpoint is consistent with the last one it cosigned, then signs
it; a verifier that trusts the witness's key then knows that the checkpoint it holds is
the one the witness saw, not one made for it alone. The format, byte for byte
(https://c2sp.org/tlog-cosignature, the same as the bundled verifier's):

- the note body is the checkpoint's signed text, ``"<origin>\\n<size>\\n<root hex>\\n"``;
- the signed message is ``"cosignature/v1\\ntime <T>\\n" + body`` (T: POSIX seconds,
  ASCII decimal, no leading zeros);
- the key ID is ``SHA-256(name + "\\n" + 0x04 + the 32 raw Ed25519 public key bytes)[:4]``;
- the signature line is ``"— " + name + " " + base64(key ID + T as 8 bytes big-endian +
  the 64-byte Ed25519 signature)`` (U+2014 EM DASH, then one space).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

DASH = "\u2014"
_ALGORITHM_COSIGNATURE_V1 = b"\x04"
_NAME = re.compile(r"[^\s+]+")  # a note key name: no spaces, no plus sign


class CosignatureError(ValueError):
    """A cosignature line that is malformed, of another witness, or does not verify."""


def message(text: str, t: int) -> bytes:
    """The bytes a witness signs for checkpoint ``text`` at POSIX time ``t``."""
    if t < 0:
        raise CosignatureError("a cosignature's time is a non-negative number of seconds")
    return f"cosignature/v1\ntime {t}\n".encode() + text.encode()


def key_id(name: str, raw: bytes) -> bytes:
    """The 4-byte key ID of the witness ``name`` with raw Ed25519 public key ``raw``."""
    if not _NAME.fullmatch(name):
        raise CosignatureError(f"a witness name has no spaces or '+': {name!r}")
    if len(raw) != 32:
        raise CosignatureError("an Ed25519 public key is 32 bytes")
    return hashlib.sha256(name.encode() + b"\n" + _ALGORITHM_COSIGNATURE_V1 + raw).digest()[:4]


def sign_line(name: str, private_key: Ed25519PrivateKey, text: str, t: int) -> str:
    """The signature line of witness ``name`` cosigning checkpoint ``text`` at time ``t``."""
    raw = private_key.public_key().public_bytes_raw()
    blob = key_id(name, raw) + t.to_bytes(8, "big") + private_key.sign(message(text, t))
    return f"{DASH} {name} {base64.b64encode(blob).decode()}"


def line_name(line: str) -> str:
    """The witness name a signature line claims (not yet verified)."""
    parts = line.rstrip("\n").split(" ")
    if len(parts) != 3 or parts[0] != DASH or not _NAME.fullmatch(parts[1]):
        raise CosignatureError(
            f"not a cosignature line ('{DASH} <name> <base64>', one space each): {line[:80]!r}"
        )
    return parts[1]


def verify_line(line: str, text: str, name: str, public_key: Ed25519PublicKey) -> int:
    """The time (POSIX seconds) at which witness ``name`` with ``public_key`` cosigned
    checkpoint ``text`` in ``line``; CosignatureError if the line is not exactly that."""
    if line_name(line) != name:
        raise CosignatureError(f"the line is signed as {line_name(line)!r}, not {name!r}")
    try:
        blob = base64.b64decode(line.rstrip("\n").split(" ")[2], validate=True)
    except binascii.Error as exc:
        raise CosignatureError(f"the signature of {name!r} is not base64") from exc
    if len(blob) != 4 + 8 + 64:
        raise CosignatureError(
            f"the signature of {name!r} is {len(blob)} bytes, not 76 (key ID, time, signature)"
        )
    if blob[:4] != key_id(name, public_key.public_bytes_raw()):
        raise CosignatureError(f"the line is not by the key known for witness {name!r}")
    t = int.from_bytes(blob[4:12], "big")
    try:
        public_key.verify(blob[12:], message(text, t))
    except InvalidSignature as exc:
        raise CosignatureError(
            f"the cosignature of {name!r} does not verify for this checkpoint"
        ) from exc
    return t
