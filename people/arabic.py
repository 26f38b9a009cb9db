"""One normalisation of names and search text, for the blind index and for search.

Two spellings a person might give of the same name should normalise to the same text:
tashkeel (short vowels, shadda, sukun) and tatweel are dropped; alef forms (أ إ آ ٱ)
become ا; hamza seats (ؤ ئ) lose the hamza and a lone ء is dropped; alef maqsura ى
becomes ي; taa marbuta ة becomes ه; Persian kaf and yeh become the Arabic letters;
Arabic-Indic digits become 0-9; Latin text is case-folded and loses its accents;
runs of spaces become one space. False matches are acceptable (a duplicate check
offers candidates), missed matches are not.
"""

from __future__ import annotations

import unicodedata

_LETTERS = str.maketrans(
    {
        "\u0671": "\u0627",  # alef wasla → alef (NFKD does not decompose it)
        "\u0649": "\u064a",  # alef maqsura → yeh
        "\u06cc": "\u064a",  # Farsi yeh → yeh
        "\u0629": "\u0647",  # taa marbuta → heh
        "\u06c1": "\u0647",  # heh goal → heh
        "\u06a9": "\u0643",  # keheh → kaf
        "\u0621": None,  # lone hamza
        "\u0640": None,  # tatweel
        **{chr(0x0660 + d): str(d) for d in range(10)},  # Arabic-Indic digits
        **{chr(0x06F0 + d): str(d) for d in range(10)},  # extended (Persian) digits
    }
)


def _strip_marks(text: str) -> str:
    # NFKD splits أ into ا + hamza above, ؤ into و + hamza above, é into e + acute, and
    # turns presentation forms into plain letters; dropping the marks (Mn) and format
    # characters (Cf: ZWJ, RLM, ...) then removes tashkeel, hamza marks and accents.
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if unicodedata.category(c) not in {"Mn", "Cf"})


def normalise(text: str) -> str:
    """The canonical form of a name or search term (idempotent)."""
    text = _strip_marks(text).casefold()
    text = _strip_marks(text).translate(_LETTERS)
    return " ".join(text.split())
