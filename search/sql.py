"""The SQL twin of ``search.normalise.normalise``, written from the same tables.

``create_function_sql()`` returns the ``CREATE FUNCTION athar_normalise(text)`` statement
for PostgreSQL: the same steps, in the same order, with the character classes this
Python's Unicode database gives (the marks and format characters to drop, the case
folds, the whitespace). Migrations hold a frozen copy of it; a test fails when this
Python would write a different one (a new Unicode version: add a migration that
replaces the function, then rebuild what indexes it). ``python -m search.sql`` prints it.

PostgreSQL's ``normalize()`` brings its own Unicode tables (14.0 in PostgreSQL 15), so
for characters assigned after that version the two may differ; every script Athar's
users write was assigned long before.
"""

from __future__ import annotations

import sys
import unicodedata
from collections.abc import Iterable
from functools import cache

from .normalise import AE, ARABIC_MARKS, DROPPED_CATEGORIES, HAMZA_ABOVE, HEH, LETTERS

FUNCTION = "athar_normalise"


def _code_points() -> Iterable[str]:
    for cp in range(sys.maxunicode + 1):
        if not 0xD800 <= cp <= 0xDFFF:
            yield chr(cp)


@cache
def dropped_characters() -> frozenset[str]:
    """Step 3's marks and format characters."""
    return frozenset(c for c in _code_points() if unicodedata.category(c) in DROPPED_CATEGORIES)


@cache
def case_folds() -> dict[str, str]:
    """Step 4's case folds of the non-ASCII characters that reach it (decomposed, unmarked)."""
    dropped = dropped_characters()
    return {
        c: c.casefold()
        for c in _code_points()
        if not c.isascii()
        and c not in dropped
        and unicodedata.normalize("NFKD", c) == c
        and c.casefold() != c
    }


@cache
def whitespace() -> frozenset[str]:
    """What ``str.split()`` splits on, of what step 1 leaves (it makes the rest spaces)."""
    return frozenset(
        c for c in _code_points() if c.isspace() and unicodedata.normalize("NFKD", c) == c
    )


def _escape(c: str) -> str:
    """A character in a PostgreSQL regular expression (advanced syntax)."""
    cp = ord(c)
    return f"\\u{cp:04X}" if cp <= 0xFFFF else f"\\U{cp:08X}"


def _regex_class(chars: Iterable[str]) -> str:
    """A bracket expression of ``chars`` in ranges, ASCII only."""
    points = sorted(ord(c) for c in chars)
    ranges: list[list[int]] = []
    for cp in points:
        if ranges and ranges[-1][1] == cp - 1:
            ranges[-1][1] = cp
        else:
            ranges.append([cp, cp])
    parts = [
        _escape(chr(a)) if a == b else f"{_escape(chr(a))}-{_escape(chr(b))}" for a, b in ranges
    ]
    return "[" + "".join(parts) + "]"


def _unicode_literal(text: str) -> str:
    """``text`` as a PostgreSQL Unicode string constant (U&'...'), ASCII only."""
    out = []
    for c in text:
        cp = ord(c)
        if c.isascii() and c.isalnum():
            out.append(c)
        elif cp <= 0xFFFF:
            out.append(f"\\{cp:04X}")
        else:
            out.append(f"\\+{cp:06X}")
    return "U&'" + "".join(out) + "'"


# Letters of step 2 that nearly every Arabic text has: translated without asking first.
_EVERYWHERE = "\u0629\u0649"  # ة ى
# The others, by group: a group is looked for at once, then each of its characters.
_GROUPS = (
    "".join(chr(0x0660 + d) for d in range(10)),  # Eastern Arabic digits
    "".join(chr(0x06F0 + d) for d in range(10)),  # Persian digits
)


def _array(chars: Iterable[str]) -> str:
    return "ARRAY[" + ", ".join(_unicode_literal(c) for c in chars) + "]"


def _step_two() -> str:
    rest = "".join(c for c in LETTERS if c not in _EVERYWHERE and not any(c in g for g in _GROUPS))
    marks = _regex_class(chr(cp) for a, b in ARABIC_MARKS for cp in range(a, b + 1))
    heh_with_yeh = f"{_escape(AE)}(?={marks}*{_escape(HAMZA_ABOVE)})"
    lines = [
        "t := normalize(t, NFKD);",
        f"IF strpos(t, {_unicode_literal(AE)}) > 0 THEN",
        f"    t := regexp_replace(t, '{heh_with_yeh}', {_unicode_literal(HEH)}, 'g');",
        "END IF;",
        f"t := translate(t, {_unicode_literal(_EVERYWHERE)}, "
        f"{_unicode_literal(''.join(LETTERS[c] for c in _EVERYWHERE))});",
    ]
    for group in (*_GROUPS, rest):
        lines += [
            f"IF t ~ '{_regex_class(group)}' THEN",
            f"    src := {_array(group)};",
            f"    dst := {_array(LETTERS[c] for c in group)};",
            "    FOR i IN 1 .. array_length(src, 1) LOOP",
            "        IF strpos(t, src[i]) > 0 THEN t := replace(t, src[i], dst[i]); END IF;",
            "    END LOOP;",
            "END IF;",
        ]
    return "\n    ".join(lines)


def create_function_sql() -> str:
    """The statement creating ``athar_normalise(text)``.

    PostgreSQL's ``translate()`` and ``regexp_replace()`` take time in proportion to the
    text, and ``translate()`` also to the characters it looks for, while a regular
    expression only looking (``~``) and ``strpos()`` are fast: so a step that most texts
    do not need runs only when a match finds something for it to do, and the rarer
    letters of step 2 are replaced one by one, each only when present."""
    folds = case_folds()
    single = {c: f for c, f in folds.items() if len(f) == 1}
    fold_from = _unicode_literal("".join(single))
    fold_to = _unicode_literal("".join(single.values()))
    fold_multi = "t"
    for c, f in sorted((c, f) for c, f in folds.items() if len(f) > 1):
        fold_multi = f"replace({fold_multi}, {_unicode_literal(c)}, {_unicode_literal(f)})"
    spaces = _regex_class(whitespace())
    # Something for step 5 to do: a space other than " ", two in a row, one at an end.
    untidy = _regex_class(whitespace() - {" "}) + "|  |^ | $"
    return f"""CREATE OR REPLACE FUNCTION {FUNCTION}(t text) RETURNS text
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $fn$
DECLARE
    src text[];
    dst text[];
BEGIN
    -- 1, 2: NFKD, then the letters, digits and signs decomposition leaves apart
    {_step_two()}
    -- 3: drop the combining marks (Mn) and format characters (Cf)
    t := regexp_replace(t, '{_regex_class(dropped_characters())}', '', 'g');
    -- 4: case fold (ASCII, then the rest of str.casefold)
    t := lower(t COLLATE "C");
    IF t ~ '{_regex_class(folds)}' THEN
        t := translate(t, {fold_from}, {fold_to});
        t := {fold_multi};
    END IF;
    -- 5: one space between words, none around
    IF t ~ '{untidy}' THEN
        t := btrim(regexp_replace(t, '{spaces}+', ' ', 'g'), ' ');
    END IF;
    RETURN t;
END
$fn$"""


DROP_FUNCTION_SQL = f"DROP FUNCTION IF EXISTS {FUNCTION}(text)"


if __name__ == "__main__":
    print(create_function_sql())
