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
    }
)
# ... and with a number in them: the pattern of each, and its words.
PURPOSE_FIXITY = gettext_noop("fixity check #%(n)s")
OWN_NUMBERED = ((re.compile(r"fixity check #(?P<n>[0-9]+)"), PURPOSE_FIXITY),)
