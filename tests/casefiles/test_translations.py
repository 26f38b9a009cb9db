import gettext
import re
from pathlib import Path

from django.conf import settings

LOCALE = Path(settings.BASE_DIR) / "casefiles" / "locale" / "ar" / "LC_MESSAGES"


def _po_entries():
    text = (LOCALE / "django.po").read_text()
    for msgid, msgstr in re.findall(r'msgid ((?:".*"\n)+)msgstr ((?:".*"\n)+)', text):

        def join(block):
            return "".join(line[1:-1] for line in block.strip().splitlines())

        yield join(msgid).replace('\\"', '"'), join(msgstr).replace('\\"', '"')


def test_every_string_has_an_arabic_translation():
    untranslated = [msgid for msgid, msgstr in _po_entries() if msgid and not msgstr]
    assert untranslated == []


def test_the_committed_catalogue_is_compiled_from_the_po_file():
    with (LOCALE / "django.mo").open("rb") as fh:
        catalogue = gettext.GNUTranslations(fh)
    for msgid, msgstr in _po_entries():
        if msgid:
            assert catalogue.gettext(msgid) == msgstr, msgid


def test_no_translation_is_left_marked_as_a_guess():
    """compilemessages leaves out entries flagged fuzzy, so the page would show English;
    makemessages flags a new string that resembles an old one, also beside other flags."""
    flags = re.findall(r"^#, (.*)$", (LOCALE / "django.po").read_text(), re.M)
    assert [f for f in flags if "fuzzy" in f] == []
