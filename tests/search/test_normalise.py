"""The normaliser and its SQL twin: a golden table, the two held to each other on random
text and on every code point, and the rules that make it safe to index with."""

import unicodedata
from importlib import import_module

import pytest
from django.db import connection
from hypothesis import given, settings
from hypothesis import strategies as st

from search.normalise import LETTERS, normalise
from search.sql import create_function_sql
from tests.search.golden import GOLDEN

postgres_only = pytest.mark.skipif(
    connection.vendor != "postgresql", reason="SQLite runs the Python function itself"
)


def in_sql(text):
    with connection.cursor() as cursor:
        cursor.execute("SELECT athar_normalise(%s)", [text])
        return cursor.fetchone()[0]


# Text as it reaches Athar: Arabic letters, marks and digits (with the Supplement and
# Extended-A blocks), its presentation forms, Latin with its accents and combining
# marks, other cased scripts, digits, and every kind of space, joiner and direction mark.
_BLOCKS = [
    (0x0020, 0x007E),
    (0x00A0, 0x024F),
    (0x0300, 0x036F),
    (0x0370, 0x04FF),
    (0x0600, 0x06FF),
    (0x0750, 0x077F),
    (0x08A0, 0x08FF),
    (0x1E00, 0x1EFF),
    (0xFB50, 0xFDFF),
    (0xFE70, 0xFEFF),
]
_INVISIBLE = "\t\n\r\x0b\x0c\x1c\x85\u1680\u2000\u2003\u200a\u200b\u200c\u200d\u200e\u200f"
_INVISIBLE += "\u2028\u2029\u202a\u202b\u202c\u202d\u202e\u202f\u205f\u2066\u2067\u2068\u2069"
_INVISIBLE += "\u3000\ufeff\u061c\u0640\u00ad"
CHARACTERS = st.one_of(
    *(
        st.characters(min_codepoint=a, max_codepoint=b, exclude_categories=["Cs", "Cn", "Co"])
        for a, b in _BLOCKS
    ),
    st.sampled_from(_INVISIBLE),
    st.sampled_from(" " * 5),
)
TEXT = st.text(CHARACTERS, max_size=24)


@pytest.mark.parametrize(("typed", "indexed"), GOLDEN)
def test_golden_table_in_python(typed, indexed):
    assert normalise(typed) == indexed


@pytest.mark.django_db
def test_golden_table_in_sql():
    """On the run's database: the PostgreSQL function, or on SQLite the registered one."""
    assert len(GOLDEN) >= 60
    wrong = [
        (typed, got, indexed) for typed, indexed in GOLDEN if (got := in_sql(typed)) != indexed
    ]
    assert not wrong


def test_the_golden_table_covers_every_letter_rule():
    typed = "".join(t for t, _ in GOLDEN)
    assert set(LETTERS) - set(typed) - set(unicodedata.normalize("NFKD", typed)) == set()


@pytest.mark.django_db
@settings(max_examples=300, deadline=None)
@given(TEXT)
def test_python_and_sql_agree_on_random_text(text):
    assert in_sql(text) == normalise(text)


@pytest.mark.django_db
def test_null_stays_null():
    assert in_sql(None) is None


@given(st.text(st.characters(exclude_categories=["Cs"]), max_size=40))
def test_normalising_twice_changes_nothing(text):
    once = normalise(text)
    assert normalise(once) == once


@given(TEXT)
def test_normalising_twice_changes_nothing_in_the_scripts_athar_sees(text):
    once = normalise(text)
    assert normalise(once) == once


@given(TEXT)
def test_nothing_folded_is_left(text):
    out = normalise(text)
    assert not set(out) & set(LETTERS)
    assert not set(out) & set("أإآؤئ")
    assert not any(unicodedata.category(c) in ("Mn", "Cf") for c in out)
    assert out == out.casefold() == " ".join(out.split())


@given(st.lists(st.characters(min_codepoint=0x0621, max_codepoint=0x064A), max_size=12), st.data())
def test_marks_anywhere_change_nothing(letters, data):
    marks = [chr(c) for c in range(0x064B, 0x0653)] + ["\u0670", "\u0640", "\u200c", "\u200d"]
    marked = list(letters)
    for mark in data.draw(st.lists(st.sampled_from(marks), max_size=6)):
        marked.insert(data.draw(st.integers(0, len(marked))), mark)
    assert normalise("".join(marked)) == normalise("".join(letters))


@postgres_only
@pytest.mark.django_db
def test_python_and_sql_agree_on_every_code_point():
    """Every character alone through both: they differ only where PostgreSQL's own
    Unicode tables (older than Python's) do not know a character's decomposition."""
    chars = [chr(cp) for cp in range(1, 0x110000) if not 0xD800 <= cp <= 0xDFFF]
    differ = []
    with connection.cursor() as cursor:
        for start in range(0, len(chars), 50_000):
            batch = chars[start : start + 50_000]
            cursor.execute(
                "SELECT athar_normalise(c), normalize(c, NFKD) = c "
                "FROM unnest(%s::text[]) WITH ORDINALITY AS u(c, n) ORDER BY n",
                [batch],
            )
            for c, (got, pg_keeps) in zip(batch, cursor.fetchall(), strict=True):
                if got != normalise(c):
                    differ.append((f"U+{ord(c):04X}", pg_keeps))
    unexplained = [cp for cp, pg_keeps in differ if not pg_keeps]
    assert not unexplained
    assert all(
        unicodedata.normalize("NFKD", chr(int(cp[2:], 16))) != chr(int(cp[2:], 16))
        for cp, _ in differ
    )
    assert len(differ) < 100  # Unicode 15's Cyrillic modifier letters, on PostgreSQL 15


def test_the_migration_holds_the_function_this_python_writes():
    """A new Python with new Unicode tables would normalise differently from the SQL
    function the database has: then add a migration with the new ``create_function_sql()``
    (``python -m search.sql``) and rebuild what indexes ``athar_normalise``."""
    migration = import_module("search.migrations.0001_athar_normalise")
    assert migration.CREATE_FUNCTION == create_function_sql()


@pytest.mark.django_db
def test_an_index_can_be_built_on_it():
    """IMMUTABLE on PostgreSQL, deterministic on SQLite: either refuses an expression
    index on a function that is neither."""
    with connection.cursor() as cursor:
        cursor.execute("CREATE TEMPORARY TABLE search_probe (body text)")
        cursor.execute(
            "CREATE INDEX search_probe_normalised ON search_probe (athar_normalise(body))"
        )
        cursor.execute("INSERT INTO search_probe (body) VALUES (%s), (%s)", ["أحمد", "فاطمة"])
        cursor.execute(
            "SELECT body FROM search_probe WHERE athar_normalise(body) = athar_normalise(%s)",
            ["احمد"],
        )
        assert cursor.fetchall() == [("أحمد",)]
