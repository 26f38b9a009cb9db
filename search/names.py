"""Name keys: the spellings of one Arabic name, in either script, meet at a key.

An investigator types a name as heard: "Abd al-Rahman", "Abdulrahman", "Abdel Rahman",
"Abd-ur-Rahman", "Abdurrahman", "عبد الرحمن", "عبدالرحمن". A name is cut into parts
(a compound such as Abd al-Rahman, Abu Bakr, Umm Kulthum, Nur al-Din or Nasr Allah is
one part), and each part gets keys: consonant skeletons much like Arabic script itself,
which writes consonants and long vowels and leaves short vowels out (decision 0010).

- Case, accents and the marks of ʿayn and hamza (ʿ ʾ ' ’, Arabizi 2 and 3) go;
  scholarly letters say what they stand for (ḥ h, ṣ s, ā a, ī ee, ū oo, š sh, ḫ kh).
- Articles go: al-, el-, ul-, and the assimilated ad-, ar-, as-, at-, az-, ash-, an-,
  ed-, er-, es-, ud-, ur-, us- ..., written apart, hyphenated, or inside Abd, Allah and
  al-Din compounds (Abdulrahman, Abdurrahman, Nasrullah, Nureddin); a word written with
  its article joined (Alassad) is also keyed without it, and an Arabic word after ال
  also with it (الياس is Elias). bin, ibn, bint and initials are not keys.
- Consonants that transliterations spell several ways meet: kh x (خ), sh ch sch (ش),
  th (ث, and ت ح or ت ه, which Latin writes alike), gh (غ), dh z (ذ ظ, and د ه),
  j g dj (ج), q k c (ق ك; c before e, i is s), ph f. Doubled letters are one, also
  across a vowel left out (Habib, حبيب).
- Vowels that may be short go: a, o, and e (fatha, kasra and damma are not written in
  Arabic). i, u and ou give two keys each, one without and one with y or w, since Latin
  does not say whether they are long (ي و) or short; so does an e before a word's last
  consonant (Ibrahem), and an ae (Wael, Raed: وائل رائد). Long vowels and diphthongs
  that cannot be short keep y or w: ee ii ie ai ei ay ey (ي), oo uu (و), and ou after
  the first syllable (French spelling writes ou for short u only there: Moustafa).
- How a word starts and ends counts: a word beginning with a vowel or ʿayn (Ahmad,
  Omar, Ali, Issa) begins with "a"; one ending in a (a, ة ا ى) ends in "a", in i
  (i y ee, ي) in "y", in u (oo, و) in "w"; a final -ah or -eh is a taa marbuta or a
  real h (Fatimah, Salah: صلاح), a final e silent or a taa marbuta (Abderrahmane,
  Fatme): each gives both keys.

``arabic_to_latin`` spells Arabic script in Latin letters by the same rules (consonants,
long vowels as written), so ``latin_key`` gives one key for both scripts. The keys are
generous on purpose: a false candidate costs a look, a missed person costs more. Names
that share a key because one script writes them alike: Omar, Ammar and Amr; Ayman and
Iman; Osama and Asma; Samir and Samer; Karim and Karam; Mahmud (one u) and Muhammad.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from itertools import product
from typing import Final

# -- Latin folding --------------------------------------------------------------------------

# Letters whose accent carries the transliteration: long vowels and the digraph letters.
_PRECOMPOSED: Final[dict[str, str]] = {
    "ā": "a",
    "â": "a",
    "ī": "ee",
    "î": "ee",
    "ū": "oo",
    "û": "oo",
    "š": "sh",
    "ş": "sh",
    "ṣ": "s",
    "ḥ": "h",
    "ṭ": "t",
    "ḍ": "d",
    "ẓ": "z",
    "ḏ": "dh",
    "ṯ": "th",
    "ḫ": "kh",
    "ẖ": "kh",
    "ḵ": "kh",
    "ġ": "gh",
    "ǧ": "j",
    "ž": "zh",
    "ç": "ch",
}
# Letters without a decomposition.
_PLAIN: Final[dict[str, str]] = {
    "ı": "i",
    "ł": "l",
    "ø": "o",
    "æ": "ae",
    "œ": "oe",
    "ð": "dh",
    "þ": "th",
    "đ": "d",
    "ħ": "h",
}
# The marks of ʿayn and hamza become one apostrophe: it separates, then goes.
_APOSTROPHES: Final = "'’‘`´ʿʾʻʼˈ′ʽ‛"
# Arabizi, the chat alphabet: 2 ء, 3 ع, 5 خ, 6 ط, 7 ح, 8 غ, 9 ق (only inside a word).
_ARABIZI: Final[dict[str, str]] = {
    "2": "'",
    "3": "'",
    "5": "kh",
    "6": "t",
    "7": "h",
    "8": "gh",
    "9": "q",
}
_SEPARATORS: Final = re.compile(r"[\s\-‐‑‒–—_.,;:/\\()\[\]{}·|+&]+")
_VOWELS: Final = frozenset("aeiou")

# Consonant digraphs and letters, longest first, to one symbol each.
_CONSONANTS: Final[tuple[tuple[str, str], ...]] = (
    ("sch", "S"),
    ("sh", "S"),
    ("ch", "S"),
    ("kh", "X"),
    ("gh", "G"),
    ("th", "T"),
    ("dh", "z"),
    ("ph", "f"),
    ("dj", "j"),
    ("zh", "j"),
    ("ck", "k"),
    ("q", "k"),
    ("c", "k"),
    ("g", "j"),
    ("x", "X"),
)
# Vowel letters together, longest first: Y a long i or a diphthong (ي), W a long u (و),
# I and U an i or u that may be long or short, E an "ae" that may hide a hamza on yeh
# (Wael, Raed), "" a vowel that is short (or is alef, which keys leave out).
_VOWEL_UNITS: Final[tuple[tuple[str, str], ...]] = (
    ("ee", "Y"),
    ("ii", "Y"),
    ("ie", "Y"),
    ("ai", "Y"),
    ("ei", "Y"),
    ("oo", "W"),
    ("uu", "W"),
    ("ou", "O"),
    ("ae", "E"),
    ("i", "I"),
    ("u", "U"),
    ("a", ""),
    ("e", ""),
    ("o", ""),
)


def _fold_latin(text: str) -> str:
    """Lower case, accents gone (or spelled out), apostrophes one, Arabizi letters."""
    text = unicodedata.normalize("NFC", text.casefold())
    text = "".join(_PRECOMPOSED.get(c, c) for c in text)
    text = unicodedata.normalize("NFKD", text)
    text = "".join(c for c in text if unicodedata.category(c) != "Mn")
    text = "".join(
        "'" if c in _APOSTROPHES else _PLAIN.get(c, c) for c in unicodedata.normalize("NFC", text)
    )
    words = []
    for word in _SEPARATORS.split(text):
        if any(c.isalpha() for c in word):
            word = "".join(_ARABIZI.get(c, c) for c in word)
        word = "".join(c for c in word if c.isalpha() or c == "'").strip("'")
        words.append(re.sub(r"c(?=[eiy])", "s", word))  # French c: Youcef, Kacem
    return " ".join(w for w in words if w)


# -- Parts: articles, compounds -------------------------------------------------------------

_SUN: Final = "(?:th|dh|sh|t|d|r|z|s|n|l)"
_ARTICLE: Final = re.compile(rf"^[aeiou](?:l|{_SUN})$")
_ABD: Final = re.compile(rf"^abe?d(?:ou|[aeiou])?(?:l|{_SUN})?$")
_ABD_JOINED: Final = re.compile(r"^(abe?d)(.{3,})$")
_ABU: Final = frozenset({"abu", "abou", "abo", "aboo", "abw"})
_UMM: Final = frozenset({"umm", "um", "om", "omm", "oum", "oumm", "am"})
_CONNECTORS: Final = frozenset({"bin", "ibn", "ben", "bn", "bint", "binti", "bent", "ould"})
_DIN: Final = re.compile(r"^(?:[aeiou]?d)?(?:din|deen|dine|dien|dyn)$")
_ALLAH: Final = re.compile(r"^[aeiou]?llah?$")
# A word of one letter (an initial: "M. Ali") carries nothing to match on.
_MIN_WORD: Final = 2


def _strip_article(word: str, joined: bool) -> tuple[str, ...]:
    """Spellings of the second word of a compound without its article. ``joined``: it
    was written into the first (Abdulrahman), so any leading vowel is the article's."""
    m = re.match(r"^(?:ou|[aeiou])l(.{2,})$", word)
    if m:
        rest = m.group(1)
        # Abdelatif: the article's l is also the sun letter l of Latif.
        spellings = (rest, "l" + rest) if rest[0] in _VOWELS else (rest,)
        return spellings if joined else (*spellings, word)
    if not joined:
        return (word,)
    m = re.match(r"^(?:ou|[aeiou])([^aeiou'])\1(.*)$", word)  # Abdurrahman
    if m:
        return (m.group(1) + m.group(2),)
    m = re.match(r"^(?:ou|[aeiou])([^aeiou'].+)$", word)  # Abdurahman, Abdukarim
    if m:
        return (m.group(1),)
    return (word,)


def _suffix(word: str) -> tuple[str, ...] | None:
    """Spellings of a second word that attaches to the word before it: al-Din, Allah."""
    if (m := re.match(r"^[aeiou]l(d.+)$", word)) and _DIN.match(m.group(1)):
        word = m.group(1)  # aldin, eldine: the article written in
    if _DIN.match(word):
        m = re.match(r"^[aeiou]?d?(d\w+)$", word)
        return (m.group(1) if m else word,)  # eddine, uddin: the article assimilated
    if _ALLAH.match(word):
        return ("l" + word.lstrip("aeiou").lstrip("l"),)
    return None


Part = list[tuple[str, ...]]  # components, each as its possible spellings


def _parts(words: list[str]) -> list[Part]:
    parts: list[Part] = []
    i, n = 0, len(words)
    while i < n:
        word = words[i]
        if i + 1 < n and (word in _CONNECTORS or _ARTICLE.match(word)):
            i += 1
            continue
        part: Part
        if i + 1 < n and (_ABD.match(word) or word in _ABU or word in _UMM):
            # Abd al-Rahman, Abdel Rahman, Abu Bakr, Umm Kulthum: one part
            j = i + 2 if (i + 2 < n and _ARTICLE.match(words[i + 1])) else i + 1
            part = [("abd",) if _ABD.match(word) else (word,), _strip_article(words[j], False)]
            i = j
        elif joined := _ABD_JOINED.match(word):  # Abdulrahman, Abdallah
            part = [(joined.group(1),), _strip_article(joined.group(2), True)]
        elif word.startswith(("al", "el")) and len(word) >= 6:
            part = [(word[2:], word)]  # Alassad, Elkhatib: the article may be written in
        else:
            part = [(word,)]
        i += 1
        while i < n:  # al-Din and Allah belong to the word before: Nur al-Din, Nasrallah
            j = i + 1 if (i + 1 < n and _ARTICLE.match(words[i])) else i
            suffix = _suffix(words[j])
            if suffix is None:
                break
            part.append(suffix)
            i = j + 1
        if len(word) >= _MIN_WORD or len(part) > 1:
            parts.append(part)
    return parts


# -- A part's key -----------------------------------------------------------------------------

Slot = tuple[str, ...]  # the possible spellings of one sound, the likeliest first
# kind (c consonant, v vowel, ' apostrophe, | between compound words), symbol, letters
Unit = tuple[str, str, str]

_MAX_AMBIGUOUS: Final = 5  # past this many uncertain vowels in a part, take the first reading


def _units(spelling: str) -> list[Unit]:
    out: list[Unit] = []
    i = 0
    while i < len(spelling):
        c = spelling[i]
        table = _VOWEL_UNITS if c in _VOWELS else _CONSONANTS
        for letters, symbol in table:
            if spelling.startswith(letters, i):
                out.append(("v" if c in _VOWELS else "c", symbol, letters))
                i += len(letters)
                break
        else:
            out.append((c if c in "'|" else "c", c, c))
            i += 1
    return out


def _initial(symbol: str, letters: str) -> Slot:
    """A word's first sound, a vowel (or ʿayn): "a", and y after it if long."""
    if symbol == "Y":
        return ("ay",)
    if symbol == "I" or letters == "e":
        return ("a", "ay")  # Issa, Eman: إيمان has ي; Ibrahim, Essam do not
    return ("a",)


def _medial(symbol: str, first_syllable: bool) -> Slot:
    if symbol in ("Y", "W"):
        return (symbol.lower(),)
    if symbol == "O":  # French spelling writes ou for a short u in the first syllable
        return ("", "w") if first_syllable else ("w",)
    if symbol in ("I", "E"):
        return ("", "y")
    if symbol == "U":
        return ("", "w")
    return ("",)


def _final(symbol: str, letters: str) -> Slot:
    if symbol in ("Y", "I"):
        return ("y",)
    if symbol == "W":
        return ("w",)
    if symbol in ("U", "O") or letters == "o":
        return ("w", "")  # Abu, Hammo; Amro's o is not written in عمرو
    if letters == "e":
        return ("", "a")  # Abderrahmane's silent e, or Fatme's taa marbuta
    return ("a",)


def _next(indexes: list[int], k: int) -> int:
    return next(i for i in indexes if i > k)


def _slots(spelling: str) -> list[Slot]:
    """What each sound of a part may be written as in the key."""
    units = _units(spelling)
    consonants = [k for k, (kind, _, _) in enumerate(units) if kind == "c"]
    first = consonants[0] if consonants else len(units)
    last = consonants[-1] if consonants else -1
    # A final -ah or -eh: the taa marbuta of Fatimah, or the h of Salah (صلاح).
    tail_h = (
        last >= 1
        and units[last][1] == "h"
        and units[last - 1][0] == "v"
        and units[last - 1][2] in ("a", "e")
        and all(kind == "'" for kind, _, _ in units[last + 1 :])
    )
    slots: list[Slot] = []
    first_syllable, vowel_seen = True, False
    for k, (kind, symbol, letters) in enumerate(units):
        if kind == "|":
            first_syllable, vowel_seen = True, False
        elif tail_h and k == last - 1:
            continue
        elif tail_h and k == last:
            slots.append(("a", "h"))
        elif kind == "c":
            slots.append((symbol,))
            first_syllable = first_syllable and not vowel_seen
        elif kind == "v":
            if k < first and not any(u[0] == "v" for u in units[:k]):
                slots.append(_initial(symbol, letters))
            elif k > last and not any(u[0] == "v" for u in units[k + 1 :]):
                slots.append(_final(symbol, letters))
            elif letters == "e" and k < last and not tail_h and _next(consonants, k) == last:
                slots.append(("", "y"))  # Egyptian spelling: Ibrahem, Abdelrahem (ي)
            else:
                slots.append(_medial(symbol, first_syllable))
            vowel_seen = True
    return slots


def _collapse(key: str) -> str:
    """Doubled letters are one (also across a vowel left out: Habib, حبيب)."""
    return re.sub(r"(.)\1+", r"\1", key)


def _readings(slots: list[Slot]) -> Iterator[str]:
    fixed = 0
    capped: list[Slot] = []
    for slot in slots:
        if len(slot) > 1:
            fixed += 1
            capped.append(slot if fixed <= _MAX_AMBIGUOUS else slot[:1])
        else:
            capped.append(slot)
    for choice in product(*capped):
        yield _collapse("".join(choice))


def _part_keys(part: Part) -> tuple[str, set[str]]:
    """A part's canonical key and all its keys."""
    canonical = _collapse("".join(s[0] for s in _slots("|".join(c[0] for c in part))))
    keys = {
        key for spelling in product(*part) for key in _readings(_slots("|".join(spelling))) if key
    }
    return canonical, keys


# -- Arabic script to Latin ----------------------------------------------------------------

_ARABIC_LETTERS: Final[dict[str, str]] = {
    "ب": "b",
    "ت": "t",
    "ث": "th",
    "ج": "j",
    "ح": "h",
    "خ": "kh",
    "د": "d",
    "ذ": "dh",
    "ر": "r",
    "ز": "z",
    "س": "s",
    "ش": "sh",
    "ص": "s",
    "ض": "d",
    "ط": "t",
    "ظ": "z",
    "غ": "gh",
    "ف": "f",
    "ق": "q",
    "ك": "k",
    "ک": "k",
    "ل": "l",
    "م": "m",
    "ن": "n",
    "ه": "h",
    "ھ": "h",
    "ہ": "h",
    "ۀ": "h",
    "ة": "a",
    "ى": "a",
    "ا": "a",
    "ٱ": "a",
    "آ": "'a",
    "أ": "'",
    "إ": "'",
    "ء": "'",
    "ؤ": "'",
    "ئ": "y",
    "ع": "'",
    "و": "w",
    "ي": "y",
    "ی": "y",
    "پ": "p",
    "چ": "ch",
    "ژ": "zh",
    "گ": "g",
    "ڤ": "v",
}
_INITIAL_VOWEL: Final = frozenset("اأإآٱعء")
# Whole words spelled otherwise than letter by letter.
_WORDS: Final[dict[str, str]] = {
    "الله": "allah",
    "طه": "taha",
    "عمرو": "amr",  # the و of ʿAmr is not pronounced
    "على": "ali",  # Egyptian writing leaves final ي without dots
}
# Names ending in alef maqsura, often typed with a final ي.
_ALEF_MAQSURA_NAMES: Final = frozenset(
    "مصطفي موسي عيسي يحيي ليلي سلمي مني هدي نجوي سلوي بشري لبني رضوي ضحي مرتضي مجتبي ذكري".split()
)
_ARABIC_WORD: Final = re.compile(r"[\u0621-\u063a\u0641-\u064a\u0671-\u06d3\u06fa-\u06ff]+")
# Harakat, Quranic marks, tatweel, joiners.
_ARABIC_NOISE: Final = re.compile(
    r"[\u0610-\u061a\u064b-\u065f\u0670\u06d6-\u06ed\u0640\u200c\u200d]"
)


def _letters(word: str) -> str:
    if word in _WORDS:
        return _WORDS[word]
    if word in _ALEF_MAQSURA_NAMES:
        return _letters(word[:-1]) + "a"
    out = []
    for k, c in enumerate(word):
        if k == 0 and c in _INITIAL_VOWEL:
            out.append("a")
        elif k == len(word) - 1 and c in "يی" and k > 0:
            out.append("i")
        elif k == len(word) - 1 and c in "هھ" and k > 0:
            out.append("ah")  # a taa marbuta typed as heh (فاطمه), or a heh (نبيه)
        else:
            out.append(_ARABIC_LETTERS.get(c, c))
    return "".join(out)


def _arabic_word(word: str, joined_article: bool) -> str:
    article = "al" if joined_article else "al-"
    if word in _WORDS:
        return _WORDS[word]
    if word.startswith("عبدال") and len(word) > 5:  # عبدالرحمن, عبدالله
        return "abd " + _arabic_word(word[3:], joined_article)
    for suffix, latin in (("الدين", "al-din"), ("الله", "allah")):
        if word.endswith(suffix) and len(word) > len(suffix) + 1:  # نورالدين, نصرالله
            return _arabic_word(word[: -len(suffix)], joined_article) + " " + latin
    if word.startswith("ال") and len(word) >= 4:
        return article + _letters(word[2:])
    return _letters(word)


def _to_latin(name: str, joined_article: bool) -> str:
    name = _ARABIC_NOISE.sub("", unicodedata.normalize("NFKC", name))
    return _ARABIC_WORD.sub(lambda m: _arabic_word(m.group(0), joined_article), name)


def arabic_to_latin(name: str) -> str:
    """The Arabic words of ``name`` in Latin letters: consonants and the long vowels
    Arabic writes (عبد الرحمن → "abd al-rhmn", فاطمة → "fatma"); the rest unchanged."""
    return _to_latin(name, joined_article=False)


def _has_arabic(name: str) -> bool:
    return _ARABIC_WORD.search(name) is not None


# -- The public keys -----------------------------------------------------------------------


def _latin_parts(name: str) -> list[Part]:
    return _parts(_fold_latin(_to_latin(name, joined_article=False)).split())


def latin_key(name: str) -> str:
    """One key for the spellings of a name: each part's canonical key, space-separated
    ("Abd al-Rahman", "Abdulrahman", "Abdurrahman", "عبد الرحمن": "abdrhmn").
    Uncertain vowels are read short here; ``name_keys`` gives every reading."""
    return " ".join(key for part in _latin_parts(name) if (key := _part_keys(part)[0]))


def part_keys(name: str) -> list[frozenset[str]]:
    """Each part of a name (either script) with every key it may be found by."""
    spellings = [_to_latin(name, joined_article=False)]
    if _has_arabic(name):
        spellings.append(_to_latin(name, joined_article=True))  # الياس is Elias, not al-Yas
    found: list[set[str]] = []
    for spelling in spellings:
        parts = _parts(_fold_latin(spelling).split())
        if found and len(parts) != len(found):
            continue
        for k, part in enumerate(parts):
            keys = _part_keys(part)[1]
            if k < len(found):
                found[k] |= keys
            else:
                found.append(keys)
    return [frozenset(keys) for keys in found if keys]


def name_keys(name: str) -> set[str]:
    """The keys to index a name under (either script): any key in common with those of
    a query means it may be the same name."""
    return set().union(*part_keys(name))


__all__ = ["arabic_to_latin", "latin_key", "name_keys", "part_keys"]
