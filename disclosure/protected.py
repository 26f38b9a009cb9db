"""Who a package must not name, and where a whole item's fields name them: the case's
protected people (``Protected``, read once per package), the text of each field that is
checked (``checked_values``), and how a text is looked up by the blind indexes of names
and by codes, never in the clear (decision 0029)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from itertools import product
from typing import TYPE_CHECKING, Any

from django.db.models import Q
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from evidence.models import EvidenceItem
from people.arabic import normalise
from people.crypto import blind_index
from people.models import CODE_PREFIXES, NameDigest, Person
from search.models import NameKey
from search.names import part_keys
from search.names_index import digest as name_key

if TYPE_CHECKING:
    from casefiles.models import Case

    from .contents import Consents

# A whole item's fields that could name who it shows, who gave it or whose it was (a
# folder named after a family, a phone's owner in the medium's description): each is
# checked against the case's protected people, by the blind indexes of their names and
# by their codes. A field that names one is withheld (``exporting.WITHHELD_PROTECTED``)
# unless the approver keeps it, with a reason. Two go as recorded and cannot be
# withheld (``AS_RECORDED``): "exif", the original's own EXIF text (make, model,
# software), inside the file, byte for byte; and "acquired_from", also the "acquired"
# custody event's first custodian, bound into the audit chain by its row's hash. For
# those the approval (and the build, for a person registered since) needs the field kept,
# with a reason, or the item out of the selection.
CHECKED_FIELDS = {
    "title": gettext_lazy("title"),
    "original_filename": gettext_lazy("file name"),
    "original_path": gettext_lazy("path on the medium"),
    "camera": gettext_lazy("camera"),
    "medium": gettext_lazy("medium"),
    "acquisition_method": gettext_lazy("acquisition method"),
    "acquired_from": gettext_lazy("acquired from"),
    "exif": gettext_lazy("the file's own EXIF text"),
}
EXIF = "exif"
ACQUIRED_FROM = "acquired_from"
AS_RECORDED = (EXIF, ACQUIRED_FROM)
# Intake asks "acquired from" for the source's code: there a code is the pseudonym the
# package gives the source by (as its "source" column does), not a tie; only a name is.
BY_NAME_ONLY = (ACQUIRED_FROM,)
_EXIF_NOT_TEXT = ("DateTime", "Offset", "GPS", "Orientation")
_TOKEN = re.compile(r"[^\W_]+")
# Particles of names, never a name on their own: "al" or "Abu" meets half the case.
_PARTICLES = frozenset(
    "al el ul ad ar as at az an ash abu abo umm um bin ibn bint abd abdel abdul "
    "ال ابو ام بن بنت ابن عبد".split()
)
_PREFIXES = "".join(sorted(set(CODE_PREFIXES.values())))
_CODE = re.compile(rf"(?<![A-Za-z0-9])([{_PREFIXES}])-(\d{{4,}})(?!\d)", re.IGNORECASE)
MAX_NGRAM = 4


@dataclass(frozen=True)
class FieldMatch:
    """A field of a whole item that names a protected person (``by`` "name" or "code")."""

    field: str
    person: object  # the person's pk
    code: str
    why: str
    by: str

    @property
    def label(self) -> str:
        return str(CHECKED_FIELDS[self.field])

    @property
    def key(self) -> str:
        return self.field


def checked_values(item: EvidenceItem) -> dict[str, list[str]]:
    """The text of each of ``CHECKED_FIELDS`` of an item, as stored."""
    p = getattr(item, "provenance", None)
    exif = []
    if p is not None:
        for name, value in sorted((p.metadata or {}).items()):
            if isinstance(value, str) and not name.startswith(_EXIF_NOT_TEXT):
                exif.append(value)
    return {
        "title": [item.title],
        "original_filename": [item.original_filename],
        "original_path": [item.original_path],
        "camera": [p.camera_make, p.camera_model] if p else [],
        "medium": [p.medium, p.medium_serial] if p else [],
        "acquisition_method": [p.method] if p else [],
        ACQUIRED_FROM: [p.acquired_from] if p else [],
        EXIF: exif,
    }


def _ngrams(tokens: list[str]) -> Iterator[str]:
    """Runs of up to ``MAX_NGRAM`` tokens, joined by a space or a hyphen as a name is."""
    for n in range(1, MAX_NGRAM + 1):
        for i in range(len(tokens) - n + 1):
            gram = tokens[i : i + n]
            if any(t.isdigit() for t in gram):
                continue
            for seps in product((" ", "-"), repeat=n - 1):
                yield "".join(t + s for t, s in zip(gram, (*seps, ""), strict=True))


def text_digests(text: str) -> tuple[set[str], set[str]]:
    """What a text is looked up by: the exact-name digests (``people.crypto.blind_index``)
    of its normalised tokens and token runs, and the name-key digests (search's
    ``w:`` word and ``k:`` Latin key of each token that could be a part of a name)."""
    tokens = _TOKEN.findall(normalise(text))
    exact = {d for d in map(blind_index, _ngrams(tokens)) if d}
    keys: set[str] = set()
    for token in tokens:
        if token.isdigit() or token in _PARTICLES or len(token) < 3:
            continue
        keys.add(name_key("w:" + token))
        if len(token) >= 4:
            for found in part_keys(token):
                keys.update(name_key("k:" + k) for k in found)
    return exact, keys


class Protected:
    """The case's people whose names and codes a package must not give away: under High
    or Critical protection, or whose consent does not cover the purpose (for sharing, the
    recipient); with the digests of their names, read once (four queries)."""

    def __init__(self, case: Case, purpose: str, recipient: str, consents: Consents) -> None:
        people = Person.objects.filter(Q(case=case) | Q(case_roles__case=case)).distinct()
        self.people: dict[object, tuple[Person, str]] = {}
        self.refused: set[object] = set()  # whose consent does not cover the purpose
        for person in people.order_by("code"):
            if consents.refusal(person, purpose, recipient):
                self.refused.add(person.pk)
            if person.protection_level != Person.Protection.STANDARD:
                why = _("%(level)s protection") % {"level": person.get_protection_level_display()}
            elif refusal := consents.refusal(person, purpose, recipient):
                why = refusal
            else:
                continue
            self.people[person.pk] = (person, why)
        self.by_code = {person.code.upper(): pk for pk, (person, _w) in self.people.items()}
        self.exact: dict[str, set[object]] = {}
        self.keys: dict[str, set[object]] = {}
        pks: list[Any] = list(self.people)
        for model, into in ((NameDigest, self.exact), (NameKey, self.keys)):
            for pk, d in model.objects.filter(person__in=pks).values_list("person_id", "digest"):
                into.setdefault(d, set()).add(pk)
        self._seen: dict[str, list[tuple[object, str]]] = {}

    def unconsented(self, pk: object) -> bool:
        """Under High or Critical protection, and no consent for the purpose: the
        package names them by no code (``exporting.NEUTRAL``)."""
        person = self.people[pk][0] if pk in self.people else None
        return (
            person is not None
            and pk in self.refused
            and (person.protection_level != Person.Protection.STANDARD)
        )

    def unconsented_codes(self) -> set[str]:
        return {self.people[pk][0].code.upper() for pk in self.people if self.unconsented(pk)}

    def named_in(self, text: str) -> list[tuple[object, str]]:
        """(person, "name" or "code") of each protected person ``text`` names."""
        if not text or not self.people:
            return []
        if text not in self._seen:
            exact, keys = text_digests(text)
            found: dict[object, str] = {}
            for d in exact:
                found.update(dict.fromkeys(self.exact.get(d, ()), "name"))
            for d in keys:
                found.update(dict.fromkeys(self.keys.get(d, ()), "name"))
            for prefix, number in _CODE.findall(text):
                pk = self.by_code.get(f"{prefix}-{number}".upper())
                if pk is not None:
                    found.setdefault(pk, "code")
            self._seen[text] = sorted(found.items(), key=lambda kv: self.people[kv[0]][0].code)
        return self._seen[text]

    def matches(self, item: EvidenceItem) -> list[FieldMatch]:
        """Each field of ``item`` that names a protected person, and whom."""
        out: dict[tuple[str, object], FieldMatch] = {}
        for name, texts in checked_values(item).items():
            for text in texts:
                for pk, by in self.named_in(text):
                    if by == "code" and name in BY_NAME_ONLY:
                        continue
                    person, why = self.people[pk]
                    key = (name, pk)
                    if key not in out or (by == "name" and out[key].by == "code"):
                        out[key] = FieldMatch(name, pk, person.code, why, by)
        return [
            out[k]
            for k in sorted(out, key=lambda k: (list(CHECKED_FIELDS).index(k[0]), out[k].code))
        ]


def shielded(matches: Iterable[FieldMatch], kept: Iterable[str] = ()) -> list[str]:
    """The row fields withheld: those a match names, but those kept and those that go as
    recorded (``AS_RECORDED``)."""
    kept = set(kept)
    return sorted({m.field for m in matches if m.field not in AS_RECORDED + tuple(kept)})
