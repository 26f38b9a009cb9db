"""RFC 3161 timestamps of signed checkpoints, from a configured timestamp authority.

A timestamp token proves, on the word of a third party, that a checkpoint existed at a
time: the server cannot later pretend it signed a different log earlier. Athar only asks
for the token and keeps it; an expert verifies it with ``openssl ts -verify`` (see
docs/audit-checkpoints.md).
"""

from __future__ import annotations

import hashlib
import secrets
import urllib.request
from urllib.parse import urlsplit

from django.core.exceptions import ImproperlyConfigured

_SHA256_OID = bytes.fromhex("0609608648016503040201")  # 2.16.840.1.101.3.4.2.1
_TIMEOUT = 30


class TimestampError(Exception):
    pass


def _der(tag: int, body: bytes) -> bytes:
    n = len(body)
    if n < 0x80:
        length = bytes([n])
    else:
        raw = n.to_bytes((n.bit_length() + 7) // 8, "big")
        length = bytes([0x80 | len(raw)]) + raw
    return bytes([tag]) + length + body


def _der_int(value: int) -> bytes:
    raw = value.to_bytes(value.bit_length() // 8 + 1, "big", signed=False)
    return _der(0x02, raw)


def timestamp_query(data: bytes, nonce: int) -> bytes:
    """A DER TimeStampReq (RFC 3161 §2.4.1) for SHA-256(data), asking for the TSA's
    certificate in the reply."""
    algorithm = _der(0x30, _SHA256_OID + b"\x05\x00")
    imprint = _der(0x30, algorithm + _der(0x04, hashlib.sha256(data).digest()))
    return _der(0x30, _der_int(1) + imprint + _der_int(nonce) + b"\x01\x01\xff")


def _read(buf: bytes, at: int) -> tuple[int, int, int]:
    """(tag, start of body, end of body) of the DER element at ``at``."""
    tag, first = buf[at], buf[at + 1]
    at += 2
    if first & 0x80:
        size = first & 0x7F
        length = int.from_bytes(buf[at : at + size], "big")
        at += size
    else:
        length = first
    if at + length > len(buf):
        raise TimestampError("truncated reply")
    return tag, at, at + length


def granted_token(reply: bytes) -> bytes:
    """The TimeStampToken of a TimeStampResp whose status is granted, else an error."""
    try:
        tag, start, end = _read(reply, 0)
        status_tag, s_start, s_end = _read(reply, start)
        int_tag, i_start, i_end = _read(reply, s_start)
    except (IndexError, TimestampError) as exc:
        raise TimestampError(f"unreadable reply from the timestamp authority ({exc})") from exc
    if (tag, status_tag, int_tag) != (0x30, 0x30, 0x02):
        raise TimestampError("the reply is not a TimeStampResp")
    status = int.from_bytes(reply[i_start:i_end], "big")
    if status not in (0, 1) or s_end >= end:  # granted, grantedWithMods; token follows
        raise TimestampError(f"the timestamp authority refused (status {status})")
    return reply[s_end:end]


def request_timestamp(url: str, data: bytes) -> bytes:
    """Ask the TSA at ``url`` to timestamp ``data``; returns the whole DER reply."""
    if urlsplit(url).scheme not in {"http", "https"}:
        raise ImproperlyConfigured("ATHAR_TSA_URL must be an http(s) URL.")
    query = timestamp_query(data, secrets.randbits(63))
    request = urllib.request.Request(  # noqa: S310 (scheme checked above)
        url, data=query, headers={"Content-Type": "application/timestamp-query"}
    )
    with urllib.request.urlopen(request, timeout=_TIMEOUT) as response:  # noqa: S310
        reply: bytes = response.read()
    granted_token(reply)
    return reply
