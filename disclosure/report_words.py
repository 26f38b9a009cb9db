"""The custody report's words: every label in English and (from the .po) Arabic, the
front page's summary, and times as a reader says them. Drawn apart from the rendering so
that both the package's report and one item's report say the same things."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from django.utils import translation
from django.utils.translation import gettext, gettext_noop

from evidence.models import CustodyEvent

# --- labels, in English and (from the .po) Arabic ---------------------------------------

LABELS = {
    "title": gettext_noop("Custody report"),
    "item": gettext_noop("Item"),
    "picture": gettext_noop("Picture"),
    "sha256": gettext_noop("SHA-256 of the file"),
    "sha512": gettext_noop("SHA-512 of the file"),
    "size": gettext_noop("Size and type"),
    "kind": gettext_noop("Kind"),
    "payload": gettext_noop("File in the package"),
    "redacted": gettext_noop("Redacted copy"),
    "original_filename": gettext_noop("Original name"),
    "original_path": gettext_noop("Path on the medium"),
    "source": gettext_noop("Source"),
    "acquired_from": gettext_noop("Acquired from"),
    "intake_date": gettext_noop("Taken in"),
    "acquisition_method": gettext_noop("Method"),
    "medium": gettext_noop("Medium"),
    "date_taken": gettext_noop("Date taken (camera clock)"),
    "camera": gettext_noop("Camera"),
    "gps": gettext_noop("GPS (latitude, longitude)"),
    "sensitivity": gettext_noop("Sensitivity"),
    "fixity": gettext_noop("Last hash check"),
    "integrity": gettext_noop("Integrity now"),
    "review_status": gettext_noop("Review status"),
    "custody": gettext_noop("Custody timeline"),
    "when": gettext_noop("When"),
    "action": gettext_noop("Action"),
    "from_to": gettext_noop("From → to"),
    "purpose": gettext_noop("Purpose"),
    "hash_check": gettext_noop("Hash check"),
    "review": gettext_noop("Review"),
    "legal": gettext_noop("Legal links"),
    "by": gettext_noop("By"),
    "page": gettext_noop("Page"),
    "none": gettext_noop("none recorded"),
    "sha512_in_manifest": gettext_noop("in manifest-sha512.txt, beside the file's name"),
    "graphic_blurred": gettext_noop("Graphic: shown blurred"),
    "graphic_hidden": gettext_noop("Graphic: no picture shown"),
    "no_picture": gettext_noop("No picture"),
    "redacted_note": gettext_noop("The package holds a redacted copy, not the original"),
    "regions": gettext_noop("regions covered"),
    "camera_clock": gettext_noop("as the camera's clock recorded it, with no time zone"),
    "fixity_none": gettext_noop("no hash check recorded in the custody chain"),
}

SUMMARY = {
    "heading": gettext_noop("What this package is, and how to check it"),
    "holds": gettext_noop("What it holds"),
    "items": gettext_noop("Evidence items"),
    "testimonies": gettext_noop("Testimonies (statements)"),
    "events": gettext_noop("Custody events"),
    "case": gettext_noop("Case"),
    "recipient": gettext_noop("Recipient"),
    "recipient_reference": gettext_noop("Recipient's reference"),
    "purpose": gettext_noop("Purpose"),
    "requested_by": gettext_noop("Asked for by"),
    "approved_by": gettext_noop("Approved by"),
    "bagging_date": gettext_noop("Date of the package"),
    "left_out": gettext_noop("Records left out (see package.json)"),
    "checks": gettext_noop("What each check proves"),
    "bagit": gettext_noop(
        "Bag validation (bagit.py --validate): the package is complete, no file is missing "
        "or added, and every file matches the manifests."
    ),
    "sums": gettext_noop(
        "sha256sum -c and sha512sum -c on the manifests: each file is, byte for byte, the "
        "one the sender recorded; the SHA-256 is the one taken when the file was first "
        "received."
    ),
    "signature": gettext_noop(
        "The signature (openssl pkeyutl -verify): the holder of the sender's key signed the "
        "list of every file's hash, this report included. It proves who sent the package "
        "only if the key is the sender's: check its fingerprint as said below."
    ),
    "checkpoint": gettext_noop(
        "The audit checkpoint and its proofs (verify.py): each audit entry in the package "
        "belongs to the sender's signed, append-only log; nothing in it was changed or "
        "removed after the checkpoint."
    ),
    "chains": gettext_noop(
        "The custody chains (verify.py): each custody event is the one the log bound when "
        "it was recorded, and each hash it verified is the file's."
    ),
    "if_fails": gettext_noop("If a check fails"),
    "fails": gettext_noop(
        "Do not rely on the package. Keep it as received, unchanged; write down the command "
        "and what it printed (it names the first file or entry that fails), and ask the "
        "sender for a new copy through a channel you trust. A file changed on the way, a "
        "damaged copy or a forgery all look the same here: none can be trusted."
    ),
    "fingerprint": gettext_noop("The sender's key fingerprint"),
    "fingerprint_how": gettext_noop(
        "Get the sender's fingerprint from the sender's published key list (the page "
        "%(path)s on the sender's server, or from the sender in person), never from this "
        "package. Then compute the fingerprint of the key in the package:"
    ),
    "fingerprint_here": gettext_noop("The key in this package has the fingerprint:"),
    "fingerprint_match": gettext_noop(
        "The two must be the same string. If they differ, the package was not signed by the sender."
    ),
    "footer_manifest": gettext_noop("SHA-256 of manifest-sha256.txt"),
}

ACTIONS = dict(CustodyEvent.Action.choices)
HASH_RESULTS = dict(CustodyEvent.HashResult.choices)


def both(table: dict[str, str]) -> dict[str, dict[str, str]]:
    out = {key: {"en": msgid} for key, msgid in table.items()}
    with translation.override("ar"):
        for key, msgid in table.items():
            out[key]["ar"] = gettext(msgid)
    return out


def choices_both(choices: dict) -> dict[str, dict[str, str]]:
    out: dict[str, dict[str, str]] = {}
    for value, label in choices.items():
        with translation.override("en"):
            en = str(label)
        with translation.override("ar"):
            ar = str(label)
        out[value] = {"en": en, "ar": ar}
    return out


# --- times, in the reader's words --------------------------------------------------------

_WEEKDAYS = (
    gettext_noop("Monday"),
    gettext_noop("Tuesday"),
    gettext_noop("Wednesday"),
    gettext_noop("Thursday"),
    gettext_noop("Friday"),
    gettext_noop("Saturday"),
    gettext_noop("Sunday"),
)
_MONTHS = (
    gettext_noop("January"),
    gettext_noop("February"),
    gettext_noop("March"),
    gettext_noop("April"),
    gettext_noop("May"),
    gettext_noop("June"),
    gettext_noop("July"),
    gettext_noop("August"),
    gettext_noop("September"),
    gettext_noop("October"),
    gettext_noop("November"),
    gettext_noop("December"),
)


class Clock:
    """Times as a reader says them, in both languages: ``Monday 7 December 2026, 12:40:07
    UTC`` and ``الاثنين 7 ديسمبر 2026، 12:40:07 (UTC)``; always in UTC, whatever the
    server's zone (the same bag gives the same report anywhere), never microseconds."""

    def __init__(self) -> None:
        with translation.override("ar"):
            self.ar_days = [gettext(d) for d in _WEEKDAYS]
            self.ar_months = [gettext(m) for m in _MONTHS]

    def __call__(self, value: Any) -> dict[str, str]:
        if not value:
            return {}
        if isinstance(value, str):
            exif = _exif_time(value)
            if exif is not None:
                return self._say(exif, zone="")
            try:
                value = datetime.fromisoformat(value)
            except ValueError:
                return {"en": value, "ar": value}  # as recorded: not a time we can read
        if value.tzinfo is None:
            return self._say(value, zone="")
        return self._say(value.astimezone(UTC), zone="UTC")

    def _say(self, t: datetime, zone: str) -> dict[str, str]:
        hms = f"{t.hour:02d}:{t.minute:02d}:{t.second:02d}"
        en = f"{_WEEKDAYS[t.weekday()]} {t.day} {_MONTHS[t.month - 1]} {t.year}, {hms}"
        ar = f"{self.ar_days[t.weekday()]} {t.day} {self.ar_months[t.month - 1]} {t.year}، {hms}"
        if zone:
            en, ar = f"{en} {zone}", f"{ar} ({zone})"
        return {"en": en, "ar": ar}


def _exif_time(value: str) -> datetime | None:
    """EXIF's ``2013:08:21 10:15:00`` (a camera's clock, no zone), or None."""
    try:
        return datetime.strptime(value.strip()[:19], "%Y:%m:%d %H:%M:%S")  # noqa: DTZ007
    except ValueError:
        return None
