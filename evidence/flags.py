"""What each intake flag means, in the reader's language.

A flag is stored as its code and a reason the app wrote in English with the values it
found (a name, a CRC, the decoder's own message). The item page shows the flag's meaning
by its code, translated, and the reason after it as recorded (its values are data)."""

from __future__ import annotations

from django.utils.functional import Promise
from django.utils.translation import gettext_lazy as _

from .names import FLAG_BIDI

FLAG_LABELS: dict[str, Promise] = {
    "empty": _("Empty file (0 bytes)."),
    "extension_mismatch": _("Its name's extension does not match its content."),
    "not_decoded": _("Too large to decode at intake: no thumbnail or metadata."),
    "decompression_bomb": _("Claims more pixels than is safe to decode: not decoded."),
    "undecodable": _("Could not be decoded (stored and hashed all the same)."),
    "bad_metadata": _("Its metadata (EXIF) could not be read."),
    "gps_invalid": _("Its GPS position is unreadable or out of range: not used."),
    "gps_ref_missing": _("Its GPS position's hemisphere is assumed: check it."),
    "exif_orientation_invalid": _("Its EXIF orientation is invalid: not used."),
    "derivative_failed": _("Its thumbnail could not be stored (the original is)."),
    "zip_crc_mismatch": _("Damaged in the ZIP archive: stored as read."),
    "stored_copy_changed": _("The copy already in the store no longer matches its SHA-256."),
    FLAG_BIDI: _("Its name holds bidirectional controls (shown written out)."),
    "filename_not_utf8": _("Its name is not UTF-8 (shown with escapes)."),
    "filename_encoding_unknown": _("Its name's encoding is unknown."),
    "manifest_mismatch": _("Differs from the custodian's checksum list."),
    "truncated": _("Cut short: shorter than its container says (stored as read)."),
    "no_decodable_stream": _("No video or audio in it could be decoded (stored and hashed)."),
    "stream_undecodable": _("One of its streams could not be decoded."),
}


def flag_label(code: str) -> str:
    """The flag's meaning in the reader's language; "" for a code this list lacks."""
    label = FLAG_LABELS.get(code)
    return str(label) if label is not None else ""
