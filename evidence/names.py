"""File names as evidence: kept exactly, but never able to pass for another name.

Unicode bidirectional controls (U+202E RIGHT-TO-LEFT OVERRIDE and the rest) make
``IMG<U+202E>gpj.exe`` display as ``IMGexe.jpg``. Such a name is kept in the record as it
was, flagged, shown with the controls written out, and never offered as a download's name.
"""

from __future__ import annotations

import re
import unicodedata

BIDI_CONTROLS = frozenset(
    "\u061c"  # ARABIC LETTER MARK
    "\u200e\u200f"  # LEFT-TO-RIGHT MARK, RIGHT-TO-LEFT MARK
    "\u202a\u202b\u202c\u202d\u202e"  # embeddings, pop, overrides
    "\u2066\u2067\u2068\u2069"  # isolates
)
_BIDI = re.compile("[" + "".join(sorted(BIDI_CONTROLS)) + "]")
FLAG_BIDI = "filename_bidi_control"


def has_bidi_controls(name: str) -> bool:
    return _BIDI.search(name) is not None


def shown_name(name: str) -> str:
    """The name with each bidi control written out, as ``<U+202E>``."""
    return _BIDI.sub(lambda m: f"<U+{ord(m[0]):04X}>", name)


def bidi_flag(path: str) -> dict[str, str] | None:
    """The flag of a name holding bidi controls, or None."""
    if not has_bidi_controls(path):
        return None
    return {
        "code": FLAG_BIDI,
        "reason": "name holds Unicode bidirectional controls, which can make it read as "
        f"another name; shown with them written out: {shown_name(path)}",
    }


def download_name(name: str, fallback: str) -> str:
    """A name for Content-Disposition: without bidi or other control characters (so it
    reads as what it is), else ``fallback``."""
    kept = "".join(
        c for c in name if c not in BIDI_CONTROLS and unicodedata.category(c) not in ("Cc", "Cf")
    ).strip()
    return kept or fallback
