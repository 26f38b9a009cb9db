"""The client's address, the same for the audit log and the lockout.

Without a configured proxy the address is ``REMOTE_ADDR``: forwarded-for headers are
written by the client and prove nothing. With ``ATHAR_TRUSTED_PROXIES`` naming the one
reverse proxy in front of Athar, a request that comes from that proxy is attributed to
the right-most ``X-Forwarded-For`` entry, the one the proxy itself appended; anything to
its left was sent by the client and is ignored.
"""

from __future__ import annotations

import ipaddress
from functools import lru_cache

from django.conf import settings
from django.http import HttpRequest


@lru_cache(maxsize=8)
def _networks(
    proxies: tuple[str, ...],
) -> tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]:
    return tuple(ipaddress.ip_network(p, strict=False) for p in proxies)


def _parse(value: str | None) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    if not value:
        return None
    try:
        return ipaddress.ip_address(value.strip().split("%")[0])
    except ValueError:
        return None


def client_ip(request: HttpRequest) -> str | None:
    """The address of the client, honest behind at most one trusted proxy."""
    remote = _parse(request.META.get("REMOTE_ADDR"))
    proxies = _networks(tuple(settings.ATHAR_TRUSTED_PROXIES))
    if remote is not None and proxies and any(remote in net for net in proxies):
        forwarded = request.META.get("HTTP_X_FORWARDED_FOR", "").split(",")
        client = _parse(forwarded[-1])
        if client is not None:
            return str(client)
    return str(remote) if remote is not None else None


def client_ip_for_axes(request: HttpRequest) -> str | None:
    # No usable address (None) is stored as NULL and still locks as one bucket.
    return client_ip(request)
