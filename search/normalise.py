"""One normaliser for everything Athar searches: Python here, its twin in SQL.

``normalise(text)`` is the form in which text is indexed and queried, so that the ways
one word reaches a keyboard meet (decision 0010):

1. NFKD: presentation forms (ﻻ, ﷲ, ﺃ ...), full-width and compatibility letters become
   the plain ones, and letters with marks come apart (أ is ا + hamza above).
2. Letters the Unicode decompositions leave apart: alef wasla ٱ → ا, alef maqsura
   ى → ي, Persian yeh ی → ي, keheh ک and swash kaf ڪ → ك, taa marbuta ة and its Urdu
   form ۃ → ه, the heh forms of Persian and Urdu keyboards (ھ ہ, and ۀ, which step 1
   made ە + hamza) → ه; tatweel ـ goes; Eastern Arabic (٠-٩) and Persian (۰-۹)
   digits → 0-9, the Arabic decimal and thousands separators and percent sign → . , %.
3. Every combining mark (Mn) and format character (Cf) is dropped: harakat, shadda,
   sukun, tanween, the dagger alef, the hamza and madda of أ إ آ ؤ ئ (which so become
   ا ا ا و ي), Latin accents; ZWJ, ZWNJ, ZWSP, LRM, RLM, ALM, the bidi embeddings
   and isolates, soft hyphens, byte-order marks.
4. Case folded: ``str.casefold``, for Latin and every other cased script.
5. Whitespace runs become one space; none at either end.

The result is in NFKD form; with no marks left that is also NFKC for Arabic and Latin
text (only scripts like Hangul would compose differently, the same way on both sides).
The SQL function ``athar_normalise(text)`` (``search/sql.py`` writes it, migration 0001
creates it on PostgreSQL; on SQLite this very function is registered under that name)
gives the same result, so an index built by the database and a query normalised here
meet. ``tests/search/test_normalise.py`` holds both to a golden table and to each other.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Final

ALEF: Final = "\u0627"
YEH: Final = "\u064a"
KAF: Final = "\u0643"
HEH: Final = "\u0647"

# Step 2: letter -> letter (or digit, or sign, or nothing), applied after NFKD.
LETTERS: Final[dict[str, str]] = {
    "\u0671": ALEF,  # ٱ alef wasla
    "\u0672": ALEF,  # ٲ alef with wavy hamza above
    "\u0673": ALEF,  # ٳ alef with wavy hamza below
    "\u0649": YEH,  # ى alef maqsura
    "\u06cc": YEH,  # ی Farsi yeh
    "\u06a9": KAF,  # ک keheh (Persian kaf)
    "\u06aa": KAF,  # ڪ swash kaf
    "\u0629": HEH,  # ة taa marbuta
    "\u06c3": HEH,  # ۃ taa marbuta goal
    "\u06be": HEH,  # ھ heh doachashmee
    "\u06c1": HEH,  # ہ heh goal
    "\u06c2": HEH,  # ۂ heh goal with hamza above
    "\u0640": "",  # ـ tatweel (a letter, Lm, to Unicode: not dropped with the marks)
    "\u066b": ".",  # ٫ Arabic decimal separator
    "\u066c": ",",  # ٬ Arabic thousands separator
    "\u066a": "%",  # ٪ Arabic percent sign
    **{chr(0x0660 + d): str(d) for d in range(10)},  # ٠-٩
    **{chr(0x06F0 + d): str(d) for d in range(10)},  # ۰-۹
}
_LETTER_TABLE: Final = str.maketrans(LETTERS)

# ۀ (heh with yeh above) decomposes to ە (ae, a Kurdish vowel letter, kept) + hamza
# above, with any Arabic marks of a lower combining class between them: that ە is a heh.
AE: Final = "\u06d5"
HAMZA_ABOVE: Final = "\u0654"
ARABIC_MARKS: Final[tuple[tuple[int, int], ...]] = (
    (0x0610, 0x061A),
    (0x064B, 0x065F),
    (0x0670, 0x0670),
    (0x06D6, 0x06DC),
    (0x06DF, 0x06E4),
    (0x06E7, 0x06E8),
    (0x06EA, 0x06ED),
)
_HEH_WITH_YEH: Final = re.compile(
    AE + "(?=[" + "".join(f"{chr(a)}-{chr(b)}" for a, b in ARABIC_MARKS) + "]*" + HAMZA_ABOVE + ")"
)

# Step 3: the general categories dropped after decomposition.
DROPPED_CATEGORIES: Final = frozenset({"Mn", "Cf"})


def normalise(text: str) -> str:
    """The searchable form of ``text``: idempotent, and equal to ``athar_normalise(text)``."""
    if text.isascii():  # every step but the case fold and the spaces leaves ASCII alone
        return " ".join(text.lower().split())
    text = unicodedata.normalize("NFKD", text)
    if AE in text:
        text = _HEH_WITH_YEH.sub(HEH, text)
    text = text.translate(_LETTER_TABLE)
    text = "".join(c for c in text if unicodedata.category(c) not in DROPPED_CATEGORIES)
    return " ".join(text.casefold().split())
