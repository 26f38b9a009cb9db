"""The organisation's signing keys, for anyone who must trust a checkpoint or a package
without trusting the copy of the key inside it: a page for signed-in users and the same
list, as JSON, at an address anyone can read (docs/audit-checkpoints.md)."""

from __future__ import annotations

import json

from django.contrib.auth.decorators import login_not_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.dateparse import parse_datetime
from django.views.decorators.http import require_GET

from . import services

WELL_KNOWN_PATH = ".well-known/athar-signing-keys"


@require_GET
def signing_keys(request: HttpRequest) -> HttpResponse:
    listing = services.signing_keys_listing()
    keys = [
        {
            **key,
            **{
                f"{name}_at": parse_datetime(key[name]) if key[name] else None
                for name in ("first_used", "last_used")
            },
            "retired_on": parse_datetime(key["retired_at"]) if key["retired_at"] else None,
        }
        for key in listing["keys"]
    ]
    return render(
        request,
        "casefiles/signing_keys.html",
        {"listing": listing, "keys": keys, "well_known": "/" + WELL_KNOWN_PATH},
    )


@login_not_required
@require_GET
def signing_keys_well_known(request: HttpRequest) -> HttpResponse:
    """Public: the keys' fingerprints, PEMs and dates of use, and nothing else."""
    body = json.dumps(services.signing_keys_listing(), indent=2, sort_keys=True) + "\n"
    response = HttpResponse(body, content_type="application/json")
    return response
