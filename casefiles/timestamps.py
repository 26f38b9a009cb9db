"""RFC 3161 timestamps of signed checkpoints, from a configured timestamp authority.

A timestamp token proves, on the word of a third party, that a checkpoint existed at a
time: the server cannot later pretend it signed a different log earlier. The request
and the reply are built and read by ``rfc3161-client`` (Trail of Bits), not by hand; a
reply is checked on receipt (granted, for SHA-256 of exactly the signed text, with the
request's nonce, signed by a TSA certificate that chains to ``ATHAR_TSA_CERTIFICATES``)
and a reply that fails any of these is refused, so nothing is stored. An expert checks
the stored token again with ``openssl ts -verify`` (see docs/audit-checkpoints.md).
"""

from __future__ import annotations

import hashlib
import urllib.request
from functools import cache
from pathlib import Path
from urllib.parse import urlsplit

from cryptography import x509
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from rfc3161_client import (
    HashAlgorithm,
    PKIStatus,
    TimestampRequestBuilder,
    TimeStampResponse,
    VerificationError,
    VerifierBuilder,
    decode_timestamp_response,
)

SHA256_OID = x509.ObjectIdentifier("2.16.840.1.101.3.4.2.1")
_TIMEOUT = 30


class TimestampError(Exception):
    """The authority did not answer, refused, or its reply does not verify."""


@cache
def _certificates(path: str) -> tuple[x509.Certificate, ...]:
    try:
        found = x509.load_pem_x509_certificates(Path(path).read_bytes())
    except (OSError, ValueError) as exc:
        raise ImproperlyConfigured(
            f"ATHAR_TSA_CERTIFICATES ({path}) must be a PEM file of the timestamp "
            f"authority's certificates: {exc}"
        ) from exc
    return tuple(found)


def trusted_certificates() -> tuple[x509.Certificate, ...]:
    """The certificates a reply must chain to (``ATHAR_TSA_CERTIFICATES``, a PEM file
    of the TSA's CA chain, as the TSA publishes it)."""
    if not settings.ATHAR_TSA_CERTIFICATES:
        raise ImproperlyConfigured(
            "ATHAR_TSA_URL is set but ATHAR_TSA_CERTIFICATES is not: Athar checks every "
            "timestamp against the authority's certificates (a PEM file of its CA chain)."
        )
    return _certificates(str(settings.ATHAR_TSA_CERTIFICATES))


def check_reply(
    reply: bytes,
    data: bytes,
    *,
    nonce: int | None,
    certificates: tuple[x509.Certificate, ...] | None = None,
) -> TimeStampResponse:
    """The decoded reply if it is a granted timestamp of SHA-256(``data``) with this
    ``nonce``, signed by a TSA certificate for time stamping that chains to
    ``certificates`` (by default the configured ones); else TimestampError saying why."""
    roots = trusted_certificates() if certificates is None else certificates
    try:
        response = decode_timestamp_response(reply)
    except ValueError as exc:
        raise TimestampError(f"unreadable reply from the timestamp authority ({exc})") from exc
    if response.status not in (PKIStatus.GRANTED, PKIStatus.GRANTED_WITH_MODS):
        said = "; ".join(response.status_string) or "no reason given"
        raise TimestampError(f"the timestamp authority refused (status {response.status}: {said})")
    imprint = response.tst_info.message_imprint
    if imprint.hash_algorithm != SHA256_OID or imprint.message != hashlib.sha256(data).digest():
        raise TimestampError("the timestamp is not for SHA-256 of this checkpoint's text")
    if nonce is not None and response.tst_info.nonce != nonce:
        raise TimestampError("the timestamp's nonce is not the one asked for (a replayed reply?)")
    builder = VerifierBuilder(nonce=nonce)
    for certificate in roots:
        builder = builder.add_root_certificate(certificate)
    try:
        builder.build().verify_message(response, data)
    except (VerificationError, ValueError) as exc:
        raise TimestampError(
            f"the timestamp does not verify against ATHAR_TSA_CERTIFICATES ({exc})"
        ) from exc
    return response


def request_timestamp(url: str, data: bytes) -> bytes:
    """Ask the TSA at ``url`` to timestamp SHA-256(``data``); returns the whole DER reply
    once it verifies (``check_reply``). Raises TimestampError (or OSError when the
    authority does not answer); nothing is to be stored then."""
    if urlsplit(url).scheme not in {"http", "https"}:
        raise ImproperlyConfigured("ATHAR_TSA_URL must be an http(s) URL.")
    certificates = trusted_certificates()
    query = (
        TimestampRequestBuilder().data(data).hash_algorithm(HashAlgorithm.SHA256).build()
    )  # with a random nonce, asking for the TSA's certificate in the reply
    request = urllib.request.Request(  # noqa: S310 (scheme checked above)
        url, data=query.as_bytes(), headers={"Content-Type": "application/timestamp-query"}
    )
    with urllib.request.urlopen(request, timeout=_TIMEOUT) as response:  # noqa: S310
        reply: bytes = response.read()
    check_reply(reply, data, nonce=query.nonce, certificates=certificates)
    return reply
