"""The app's own words in custody records and provenance."""

from __future__ import annotations

import re

from django.utils.translation import gettext_noop

# The app's own words in custody records and provenance: stored in English as written (a
# record is never rewritten), shown in the reader's language where they stand alone (the
# ``own_words`` template filter). Anything else a person typed is shown as typed (a method
# typed as exactly one of these is shown translated too: it says the same).
OWN_WORDS = frozenset(
    {
        PURPOSE_INTAKE := gettext_noop("intake"),
        METHOD_COPIED := gettext_noop("copied from the medium"),
        METHOD_UPLOADED := gettext_noop("uploaded in the browser"),
        NOTE_FIRST_READ := gettext_noop("hashed while first read"),
        NOTE_REVERIFIED := gettext_noop(
            "hashed while read; the copy already in the store was re-verified"
        ),
        NOTE_STORE_DIFFERS := gettext_noop(
            "hashed while read; the copy already in the store DIFFERS from these bytes"
        ),
        NOTE_NOT_IN_STORE := gettext_noop("not found in the store"),
        # What a fixity sweep checked, besides originals (custody events of a batch).
        CHECKED_MANIFEST := gettext_noop("intake manifest"),
        CHECKED_CUSTODIAN_LIST := gettext_noop("custodian's checksum list"),
    }
)
# ... and with values in them (a number, a digest, a package's code, an error as the
# system gave it): written with ``%`` and these words, read back by the pattern each
# makes, the values shown as they are.
PURPOSE_FIXITY = gettext_noop("fixity check #%(n)s")
NOTE_FOUND = gettext_noop("found sha256 %(sha256)s")
NOTE_UNREADABLE = gettext_noop("unreadable: %(error)s")
NOTE_MEDIUM = gettext_noop("medium: %(medium)s")
NOTE_EXPORTED = gettext_noop("In %(package)s, tar file sha256 %(sha256)s")
NOTE_REDACTED_SENT = gettext_noop(
    "a redacted copy, sha256 %(sha256)s, went instead of the original"
)
_VALUES = {
    "n": "[0-9]+",
    "sha256": "[0-9a-f]{64}",
    "package": "PKG-[0-9]+",
    "error": ".+",
    "medium": ".+",
}


def _pattern(words: str) -> re.Pattern[str]:
    pieces = re.split(r"%\((\w+)\)s", words)
    return re.compile(
        "".join(
            f"(?P<{piece}>{_VALUES[piece]})" if n % 2 else re.escape(piece)
            for n, piece in enumerate(pieces)
        )
    )


OWN_NUMBERED = tuple(
    (_pattern(words), words)
    for words in (
        PURPOSE_FIXITY,
        NOTE_FOUND,
        NOTE_UNREADABLE,
        NOTE_MEDIUM,
        NOTE_EXPORTED,
        NOTE_REDACTED_SENT,
    )
)
