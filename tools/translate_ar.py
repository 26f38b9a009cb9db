"""Fill casefiles/locale/ar/LC_MESSAGES/django.po from tools/translations/*.json (run by
`make messages` after makemessages; untranslated strings are listed and left empty)."""

import json
import re
import sys
from pathlib import Path

PO = Path(__file__).resolve().parent.parent / "casefiles/locale/ar/LC_MESSAGES/django.po"

# msgid -> Arabic, one JSON file per area of the app (casefiles.json, people.json, ...).
TABLES = Path(__file__).resolve().parent / "translations"
AR: dict[str, str] = {}
for table in sorted(TABLES.glob("*.json")):
    AR.update(json.loads(table.read_text()))

ENTRY = re.compile(r'((?:#.*\n)*)msgid ((?:".*"\n)+)msgstr ((?:".*"\n)+)')


def unquote(block: str) -> str:
    return "".join(line[1:-1] for line in block.strip().splitlines()).replace('\\"', '"')


def quote(text: str) -> str:
    return '"' + text.replace('"', '\\"') + '"\n'


def main() -> int:
    missing = []

    def fill(m: re.Match) -> str:
        msgid = unquote(m[2])
        if not msgid:
            return m[0]
        if msgid not in AR:
            missing.append(msgid)
            return m[0]
        # A translated entry is no longer a guess: drop "fuzzy" (alone or beside other
        # flags such as python-format, which gettext would otherwise skip) and the guess.
        comments = re.sub(r"^#, fuzzy\n", "", m[1], flags=re.M)
        comments = re.sub(r"^#, fuzzy, ", "#, ", comments, flags=re.M)
        comments = re.sub(r"^#\| .*\n", "", comments, flags=re.M)
        return f"{comments}msgid {m[2]}msgstr {quote(AR[msgid])}"

    text = ENTRY.sub(fill, PO.read_text())
    text = text.replace('"Language: \\n"', '"Language: ar\\n"')
    text = text.replace('#, fuzzy\nmsgid ""\nmsgstr ""', 'msgid ""\nmsgstr ""', 1)
    text = text.replace("PACKAGE VERSION", "Athar").replace("SOME DESCRIPTIVE TITLE.", "Athar")
    PO.write_text(text)
    for msgid in missing:
        print(f"untranslated: {msgid}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
