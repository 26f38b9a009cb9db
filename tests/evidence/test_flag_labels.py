"""An intake flag says what it means in the reader's language (its code's label), with
the reason as the app recorded it, values and all, after it."""

import re

import pytest

from evidence.flags import FLAG_LABELS
from evidence.models import EvidenceItem
from tests.evidence.helpers import take_in
from tests.evidence.images import jpeg_bytes
from tests.html import has_text
from tests.scratch_db import ROOT

pytestmark = pytest.mark.django_db

WRITTEN = (
    r"""\.flag\(\s*["'](\w+)["']""",  # result.flag("empty", ...)
    r"""["']code["']:\s*["'](\w+)["']""",  # {"code": "manifest_mismatch", ...}
    r"""\(\(["'](\w+)["'],\s*reason\),\)""",  # the names' decoding: (("filename_...", reason),)
)


def test_every_flag_the_app_writes_has_a_label():
    written = {"filename_bidi_control"}  # evidence/names.py, by its constant
    for path in (ROOT / "evidence").rglob("*.py"):
        source = path.read_text()
        for pattern in WRITTEN:
            written |= set(re.findall(pattern, source))
    assert {"empty", "manifest_mismatch", "filename_not_utf8"} <= written
    assert written <= FLAG_LABELS.keys(), sorted(written - FLAG_LABELS.keys())


def test_a_flag_on_the_item_page_is_in_the_reader_s_language(client, cast, tmp_path):
    take_in(cast.case, cast.investigator, {"empty.jpg": b"", "a.png": jpeg_bytes(1)}, tmp_path)
    client.force_login(cast.investigator)
    empty = EvidenceItem.objects.get(original_filename="empty.jpg")
    arabic = client.get(empty.get_absolute_url(), HTTP_ACCEPT_LANGUAGE="ar")
    assert has_text(arabic, "empty ملف فارغ (0 بايت). zero-byte file")
    misnamed = EvidenceItem.objects.get(original_filename="a.png")
    arabic = client.get(misnamed.get_absolute_url(), HTTP_ACCEPT_LANGUAGE="ar")
    assert has_text(arabic, "امتداد اسمه لا يطابق محتواه. named like")
    english = client.get(misnamed.get_absolute_url())
    assert has_text(english, "Its name's extension does not match its content. named like")
