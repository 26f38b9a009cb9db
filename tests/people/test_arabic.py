import pytest
from hypothesis import given
from hypothesis import strategies as st

from people import crypto
from people.arabic import normalise
from tests.factories import register_person

TASHKEEL = [chr(c) for c in range(0x064B, 0x0653)] + ["\u0670", "\u0640"]  # and tatweel
ARABIC = st.characters(min_codepoint=0x0600, max_codepoint=0x06FF)
ANY_TEXT = st.text(st.characters(exclude_categories=["Cs"]), max_size=40)


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ("أحمد", "احمد"),  # hamza on alef
        ("إبراهيم", "ابراهيم"),  # hamza below
        ("آمنة", "امنه"),  # madda, taa marbuta
        ("فاطمة", "فاطمه"),  # taa marbuta
        ("مُحَمَّد", "محمد"),  # tashkeel
        ("مـــحمد", "محمد"),  # tatweel
        ("عائشة", "عايشه"),  # hamza on yeh
        ("مؤمن", "مومن"),  # hamza on waw
        ("ليلى", "ليلي"),  # alef maqsura
        ("José  Núñez", "jose nunez"),  # Latin case and accents, spaces
        ("٢٠١٤", "2014"),  # Arabic-Indic digits
    ],
)
def test_spelling_variants_normalise_alike(one, other):
    assert normalise(one) == normalise(other)


def test_different_names_stay_different():
    assert normalise("سامر") != normalise("سمير")
    assert normalise("Layla") != normalise("Leila")


@given(ANY_TEXT)
def test_normalising_twice_changes_nothing(text):
    once = normalise(text)
    assert normalise(once) == once


@given(st.lists(ARABIC, max_size=20), st.lists(st.sampled_from(TASHKEEL), max_size=8), st.data())
def test_tashkeel_and_tatweel_anywhere_do_not_change_the_result(letters, marks, data):
    text = "".join(letters)
    marked = list(text)
    for mark in marks:
        marked.insert(data.draw(st.integers(0, len(marked))), mark)
    assert normalise("".join(marked)) == normalise(text)


@given(st.text(st.sampled_from("abcdefghijklmnopqrstuvwxyz "), max_size=30))
def test_latin_case_does_not_matter(text):
    assert normalise(text.upper()) == normalise(text) == normalise(text.title())


@given(ANY_TEXT)
def test_the_result_has_no_marks_alef_variants_or_extra_spaces(text):
    out = normalise(text)
    assert not set(out) & set("أإآٱىةؤئء\u0640" + "".join(TASHKEEL))
    assert out == " ".join(out.split())


@pytest.mark.django_db
def test_the_blind_index_finds_spelling_variants_without_decrypting(cast, monkeypatch):
    from people import services

    person = register_person(cast.case, cast.investigator, name_ar="فاطمة أحمد عائشة")
    register_person(cast.case, cast.investigator, name_ar="سمير")

    def refuse(*args, **kwargs):
        raise AssertionError("the lookup decrypted something")

    monkeypatch.setattr(crypto, "decrypt", refuse)
    for variant in ["فاطمه احمد عايشه", "فَاطِمَة أَحْمَد عائشة", "فاطمـة إحمد عائشه"]:
        found = services.find_people_by_name(actor=cast.investigator, case=cast.case, name=variant)
        assert found == [person], variant
    assert services.find_people_by_name(actor=cast.investigator, case=cast.case, name="فاطمة") == []


@pytest.mark.django_db
def test_the_blind_index_finds_aliases_and_latin_names(cast):
    from people import services

    person = register_person(
        cast.case, cast.investigator, name_ar="", name_latin="Layla Hassan", aliases="Umm Samer"
    )
    for name in ["LAYLA HASSAN", "umm  samer"]:
        assert services.find_people_by_name(actor=cast.investigator, case=cast.case, name=name) == [
            person
        ]
