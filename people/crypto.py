"""Field encryption (AES-256-GCM) with associated data, and the keyed blind index.

A stored value reads ``athar1:<key id>:<base64url(nonce ‖ ciphertext ‖ tag)>``. The
associated data is ``<table>|<row id>|<column>``: a ciphertext copied to another row or
column fails to decrypt. Keys come from ``settings.FIELD_KEYS`` (the first encrypts,
all decrypt), so a key is retired by putting a new one first, running
``manage.py rotate_keys`` (which re-encrypts every column registered in ``sealed``) and
then removing the old one.

The blind index is ``HMAC-SHA256(BLIND_INDEX_KEY, normalise(name))``: equal names give
equal digests, so "is this person already registered?" needs no decryption, and the
digest tells nothing without the key.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from django.conf import settings

from .arabic import normalise

PREFIX = "athar1"
_NONCE_BYTES = 12


class DecryptionError(Exception):
    """A stored value cannot be decrypted: wrong key, wrong row or column, or altered."""


class SealBroken(DecryptionError):
    """A sealed column of one row does not open: which table, row and column, and why.
    Found at a reveal, it is audited and shown as an integrity failure, never a 500."""

    def __init__(self, table: str, row: object, column: str, found: str):
        super().__init__(f"{table} row {row} column {column}: {found}")
        self.table, self.row, self.column, self.found = table, row, column, found

    def details(self) -> dict[str, object]:
        return {
            "table": self.table,
            "row": str(self.row),
            "column": self.column,
            "found": self.found,
        }


def _keys() -> dict[str, bytes]:
    return dict(settings.FIELD_KEYS)


def current_key_id() -> str:
    return settings.FIELD_KEYS[0][0]


def associated_data(table: str, row_id: object, column: str) -> bytes:
    return f"{table}|{row_id}|{column}".encode()


def encrypt(plaintext: str, aad: bytes) -> str:
    key_id, key = settings.FIELD_KEYS[0]
    nonce = os.urandom(_NONCE_BYTES)
    sealed = AESGCM(key).encrypt(nonce, plaintext.encode("utf-8"), aad)
    return f"{PREFIX}:{key_id}:{base64.urlsafe_b64encode(nonce + sealed).decode('ascii')}"


def key_id_of(token: str) -> str:
    prefix, key_id = [*token.split(":", 2), "", ""][:2]
    if prefix != PREFIX or not key_id:
        raise DecryptionError("not an Athar ciphertext")
    return key_id


def decrypt(token: str, aad: bytes) -> str:
    key_id = key_id_of(token)
    key = _keys().get(key_id)
    if key is None:
        raise DecryptionError(f"key {key_id!r} is not configured")
    try:
        raw = base64.urlsafe_b64decode(token.split(":", 2)[2].encode("ascii"))
        opened = AESGCM(key).decrypt(raw[:_NONCE_BYTES], raw[_NONCE_BYTES:], aad)
    except (InvalidTag, ValueError) as exc:
        raise DecryptionError("ciphertext does not open for this row and column") from exc
    return opened.decode("utf-8")


def open_sealed(token: str, table: str, row: object, column: str) -> str:
    """``decrypt`` a sealed column of one row, or ``SealBroken`` naming it."""
    try:
        return decrypt(token, associated_data(table, row, column))
    except DecryptionError as exc:
        raise SealBroken(table, row, column, str(exc)) from exc


def blind_index(name: str) -> str:
    """The keyed digest of a name's normalised form; empty names have none."""
    text = normalise(name)
    if not text:
        return ""
    return hmac.new(settings.BLIND_INDEX_KEY, text.encode("utf-8"), hashlib.sha256).hexdigest()
