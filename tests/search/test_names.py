"""Name keys: the spellings of one name, in Latin and Arabic script, share a key; names
that differ do not."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from search.names import arabic_to_latin, latin_key, name_keys, part_keys

# Each group: the ways one name is written. Every spelling in a group shares one key with
# all the others (one key finds them all).
SAME_NAME = [
    [
        "Mohammed",
        "Muhammad",
        "Mohamad",
        "Mohamed",
        "Muhammed",
        "Mouhamad",
        "Mohammad",
        "Mhamed",
        "محمد",
        "مُحَمَّد",
        "مـحـمـد",
    ],
    ["Ahmad", "Ahmed", "أحمد", "احمد", "أَحْمَد"],
    ["Fatima", "Fatma", "Fatimah", "Fatmeh", "Fatme", "Fátima", "فاطمة", "فاطمه"],
    ["Hussein", "Husayn", "Hossein", "Husain", "Hussain", "Houssein", "Ḥusayn", "حسين"],
    [
        "Abd al-Rahman",
        "Abdulrahman",
        "Abdel Rahman",
        "Abd-ur-Rahman",
        "Abdurrahman",
        "Abderrahmane",
        "Abdelrahman",
        "Abd Alrahman",
        "Abdurahman",
        "ʿAbd al-Raḥmān",
        "عبد الرحمن",
        "عبدالرحمن",
        "عبد الرحمٰن",
    ],
    ["Yusuf", "Youssef", "Yousef", "Yousif", "Yusef", "Youcef", "يوسف"],
    ["al-Assad", "el-Asad", "Assad", "Al Assad", "Alassad", "الأسد", "الاسد", "اسد"],
    ["Khaled", "Khalid", "Ḫālid", "خالد"],
    ["Hasan", "Hassan", "Hasson", "حسن"],
    ["Ali", "Aly", "Alee", "ʿAli", "'Ali", "علي", "على"],
    ["Alia", "Aliya", "Alya", "Aaliyah", "Aliyah", "عالية", "عاليه"],
    ["Omar", "Umar", "Omer", "Umer", "عمر"],
    ["Abdullah", "Abdallah", "Abd Allah", "Abdulla", "Abdalla", "Abdellah", "عبد الله", "عبدالله"],
    ["Mustafa", "Mostafa", "Moustafa", "Mustapha", "Moustapha", "Mostapha", "مصطفى", "مصطفي"],
    ["Ibrahim", "Ebrahim", "Ibraheem", "Ibrahem", "إبراهيم", "ابراهيم"],
    ["Aisha", "Aysha", "Ayesha", "Aïcha", "A'isha", "Aicha", "عائشة", "عايشة", "عايشه"],
    ["Zainab", "Zeinab", "Zaynab", "Zeynab", "زينب"],
    ["Layla", "Leila", "Laila", "Leyla", "Lila", "ليلى", "ليلي"],
    ["Mahmoud", "Mahmud", "Mahmood", "محمود"],
    ["Said", "Saeed", "Sa'id", "Saïd", "Saied", "سعيد"],
    [
        "Nour al-Din",
        "Nureddin",
        "Noureddine",
        "Nour El Dine",
        "Nour-Eddine",
        "Nuraddin",
        "نور الدين",
        "نورالدين",
    ],
    [
        "Abdulaziz",
        "Abdelaziz",
        "Abd al-Aziz",
        "Abdul Aziz",
        "Abd el-Aziz",
        "عبد العزيز",
        "عبدالعزيز",
    ],
    ["Osama", "Usama", "Oussama", "Ousama", "أسامة", "اسامه"],
    ["Othman", "Uthman", "Outhman", "عثمان"],
    ["Jamal", "Gamal", "Djamel", "Jamel", "Djamal", "جمال"],
    ["Qasim", "Kassem", "Kasim", "Qassem", "Kacem", "قاسم"],
    ["Shawqi", "Chawki", "Shawki", "Shauqi", "Chawqi", "شوقي"],
    ["Sharif", "Cherif", "Shareef", "Sherif", "Chérif", "شريف"],
    ["Amr", "Amro", "Amrou", "عمرو"],
    ["Walid", "Waleed", "وليد"],
    ["Bashar", "Bachar", "Bashshar", "Bashaar", "بشار"],
    ["Salah ad-Din", "Salahuddin", "Salaheddine", "Salah El Din", "Salah al-Din", "صلاح الدين"],
    ["Mamdouh", "Mamduh", "Mamdooh", "ممدوح"],
    ["Abu Bakr", "Abubakar", "Abou Bakr", "Abu-Bakr", "Abubakr", "أبو بكر", "ابو بكر"],
    ["Yahya", "Yehia", "Yahia", "Yahiya", "يحيى", "يحيي"],
    ["Issa", "Eissa", "Isa", "Essa", "عيسى"],
    ["Musa", "Moussa", "Mousa", "Mussa", "موسى"],
    ["Ismail", "Ismael", "Isma'il", "Ismaïl", "Esmail", "إسماعيل", "اسماعيل"],
    ["Jaafar", "Jafar", "Ja'far", "Jaffar", "جعفر"],
    ["Wael", "Wa'il", "Wail", "وائل"],
    ["Suleiman", "Sulayman", "Soliman", "Slimane", "Suliman", "سليمان"],
    ["Abdelkader", "Abd al-Qadir", "Abdulkadir", "Abdel Kader", "Abdulqadir", "عبد القادر"],
    ["Rami", "Ramy", "Ramie", "رامي"],
    ["Hamza", "Hamzah", "Hamze", "حمزة"],
    ["Tareq", "Tariq", "Tarek", "Tarik", "طارق"],
    ["Ghassan", "Ghasan", "غسان"],
    ["Raed", "Ra'id", "Raid", "رائد"],
    ["Mariam", "Maryam", "Mariem", "Meryem", "Mariyam", "مريم"],
    ["Nasrallah", "Nasr Allah", "Nasrullah", "نصرالله", "نصر الله"],
    ["Umm Kulthum", "Oum Kalthoum", "Um Kalthum", "أم كلثوم"],
    ["Mansour", "Mansur", "Mansoor", "منصور"],
    ["Kareem", "Karim", "Kerim", "كريم"],
    ["Samir", "Sameer", "Semir", "سمير"],
    ["Taha", "Taaha", "طه"],
    ["Elias", "Ilyas", "Elyas", "Iliyas", "إلياس", "الياس"],
    ["al-Halabi", "Halabi", "El Halaby", "Alhalabi", "الحلبي"],
    ["Abu Ahmad", "Abou Ahmed", "أبو أحمد"],
]

# Different names: never a key in common.
DIFFERENT = [
    ("Hasan", "Husayn"),
    ("Hassan", "Hussein"),
    ("حسن", "حسين"),
    ("Hasan", "حسين"),
    ("Ali", "Alia"),
    ("علي", "عالية"),
    ("Aly", "Aliya"),
    ("Mahmoud", "Muhammad"),
    ("Mahmood", "Mohamed"),
    ("محمود", "محمد"),
    ("Mahmoud", "محمد"),
    ("Ahmad", "Hamad"),
    ("أحمد", "حمد"),
    ("Ahmad", "Mahmoud"),
    ("Khalid", "Khalil"),
    ("Samir", "Samira"),
    ("سمير", "سميرة"),
    ("Yusuf", "Yunus"),
    ("Said", "Saad"),
    ("سعيد", "سعد"),
    ("Nour", "Noura"),
    ("Jamal", "Jamila"),
    ("Salim", "Salma"),
    ("Ayman", "Amin"),
    ("Fatima", "Fatin"),
    ("Mustafa", "Mahmoud"),
    ("Zainab", "Zaina"),
    ("Tariq", "Talal"),
    ("Abdullah", "Abd al-Rahman"),
    ("Abd al-Aziz", "Abd al-Rahman"),
    ("Nour al-Din", "Salah al-Din"),
    ("Layla", "Lina"),
    ("Omar", "Othman"),
    ("Hussein", "Hassan"),
    ("Hamza", "Hamdi"),
]


# Different names that do share a key, because one script writes them alike (Arabic
# leaves short vowels and alef out of the key, Latin does not say which i or u is long).
# The price of keys that miss no spelling; search/names.py says so. If one of these stops
# meeting, the keys got sharper: move it to DIFFERENT and update that docstring.
KNOWN_TO_MEET = [
    ("Omar", "Ammar"),
    ("عمر", "عمار"),
    ("Omar", "Amr"),
    ("Ayman", "Iman"),
    ("أيمن", "إيمان"),
    ("Osama", "Asma"),
    ("Samir", "Samer"),
    ("Karim", "Karam"),
    ("Mahmud", "Muhammad"),
]


def _groups():
    return [pytest.param(group, id=group[0]) for group in SAME_NAME]


def test_there_are_enough_groups():
    assert len(SAME_NAME) >= 30


@pytest.mark.parametrize("group", _groups())
def test_the_spellings_of_one_name_share_a_key(group):
    common = set.intersection(*(name_keys(name) for name in group))
    assert common, {name: sorted(name_keys(name)) for name in group}


@pytest.mark.parametrize(("one", "other"), DIFFERENT)
def test_different_names_do_not_meet(one, other):
    assert not name_keys(one) & name_keys(other), (sorted(name_keys(one)), sorted(name_keys(other)))


@pytest.mark.parametrize(("one", "other"), KNOWN_TO_MEET)
def test_the_names_said_to_meet_do(one, other):
    assert name_keys(one) & name_keys(other)


def test_the_transliterations_of_abd_al_rahman_have_one_key():
    spellings = ["Abd al-Rahman", "Abdulrahman", "Abdel Rahman", "Abd-ur-Rahman", "Abdurrahman"]
    assert {latin_key(s) for s in spellings} == {latin_key(arabic_to_latin("عبد الرحمن"))}
    assert latin_key(arabic_to_latin("عبد الرحمن")) == latin_key("Abdulrahman")
    assert latin_key("عبدالرحمن") == latin_key("Abdulrahman")


@pytest.mark.parametrize(
    ("arabic", "latin"),
    [
        ("عبد الرحمن", "abd al-rhmn"),
        ("محمد", "mhmd"),
        ("فاطمة", "fatma"),
        ("أحمد", "ahmd"),
        ("حسين", "hsyn"),
        ("علي", "ali"),
        ("مصطفى", "mstfa"),
        ("الأسد", "al-asd"),
        ("خالد", "khald"),
        ("عائشة", "aaysha"),
        ("مُحَمَّد", "mhmd"),
        ("Khaled خالد", "Khaled khald"),
    ],
)
def test_arabic_is_spelled_in_latin_letters(arabic, latin):
    assert arabic_to_latin(arabic) == latin


def test_a_full_name_has_a_key_per_part():
    parts = part_keys("خالد عبد الرحمن الأسد")
    assert len(parts) == 3
    for part, query in zip(parts, ["Khaled", "Abdulrahman", "al-Assad"], strict=True):
        assert part & name_keys(query)
    assert latin_key("Khaled Abd al-Rahman al-Assad") == "Xld abdrhmn asd"
    assert latin_key("Khaled Abd al-Rahman al-Assad") == latin_key("خالد عبدالرحمن الاسد")


def test_connectors_and_initials_are_not_keys():
    assert len(part_keys("Muhammad bin Salman")) == 2
    assert len(part_keys("محمد بن سلمان")) == 2
    assert len(part_keys("M. Ali")) == 1


@pytest.mark.parametrize("name", ["", "   ", "-", "'", "١٢٣", "ـ", "al", "ال"])
def test_names_without_letters_have_no_keys(name):
    assert name_keys(name) == set() or all(name_keys(name))


NAMES = st.text(
    st.sampled_from("abdeghiklmnorstuyz' -ʿ") | st.sampled_from("ابتحدرسعفلمنهويىةأإآء "),
    max_size=30,
)


@given(NAMES)
def test_keys_are_found_for_any_text(name):
    keys = name_keys(name)
    assert all(keys)
    assert latin_key(name) == " ".join(latin_key(name).split())
    assert name_keys(name.upper()) == keys
