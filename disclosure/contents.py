"""What a package holds: the selection resolved through the access policy, and for each
record whether it goes in, whole or with identities replaced by pseudonyms, or why not.

One rule serves the preview (before approval), the approval (which freezes the contents)
and the build (which checks them again): ``review``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from django.core.exceptions import ValidationError
from django.db.models import Max, QuerySet
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from evidence.models import EvidenceItem, Identification
from legal.models import ElementLink, Stance
from legal.services.bulk import targets
from people.models import Consent, ConsentScope, Person, Testimony
from people.protection import withheld_testimonies
from people.services import consent_in_force

from .models import NAMEABLE_FIELDS, Package, Redaction
from .protected import ACQUIRED_FROM, AS_RECORDED, EXIF, FieldMatch, Protected

if TYPE_CHECKING:
    from django.contrib.auth.models import User as Account

    from casefiles.models import Case

ITEM_REF = re.compile(r"EV-\d{1,10}")
TESTIMONY_REF = re.compile(r"T-(\d{1,10})")


def testimony_ref(testimony: Testimony) -> str:
    return f"T-{testimony.pk:04d}"


def parse_chosen(text: str) -> list[str]:
    """``EV-000001,T-0002`` (commas or spaces) as a list of references, or an error."""
    refs = [r.strip().upper() for r in re.split(r"[,\s]+", text) if r.strip()]
    bad = [r for r in refs if not (ITEM_REF.fullmatch(r) or TESTIMONY_REF.fullmatch(r))]
    if bad or not refs:
        raise ValidationError(
            _("Name items as EV-000123 and testimonies as T-0004, separated by commas: %s")
            % ", ".join(bad[:5])
        )
    return list(dict.fromkeys(refs))


def as_recorded_refusal(found: Review, kept: dict[str, dict[str, str]]) -> str | None:
    """Why the package may not go, when a whole item's field that goes as recorded (the
    EXIF text, "acquired from") names a protected person and was not kept with a reason
    (``kept``: ``{item pk: {field: reason}}``); else None. The approval asks it of the
    preview, the build again of what the case holds then."""
    unkept: dict[str, list[str]] = {}
    for line, m in found.matches:
        if m.field in AS_RECORDED and m.field not in kept.get(str(line.pk), {}):
            unkept.setdefault(m.field, [])
            if line.ref not in unkept[m.field]:
                unkept[m.field].append(line.ref)
    said = []
    if EXIF in unkept:
        said.append(
            _(
                "The file itself names a protected person in its EXIF text (%(refs)s), which "
                "goes with the file: keep it, with a reason, or refuse the package and ask "
                "again without the item."
            )
            % {"refs": ", ".join(unkept[EXIF])}
        )
    if ACQUIRED_FROM in unkept:
        said.append(
            _(
                "Whom it was acquired from names a protected person (%(refs)s), and goes as "
                "recorded in the custody chain: keep it, with a reason, or refuse the package "
                "and ask again without the item."
            )
            % {"refs": ", ".join(unkept[ACQUIRED_FROM])}
        )
    return " ".join(said) or None


@dataclass
class Line:
    """One record of the selection and what happens to it."""

    kind: str  # "item" or "testimony"
    pk: int
    ref: str
    reason: str = ""  # why it is left out ("" when it goes in)
    redaction: int | None = None  # the redacted copy that goes in instead of the original
    redactions: list[str] = field(default_factory=list)  # what is replaced, and why
    # A whole item's identifying fields that name a protected person (by name or code):
    # withheld unless the approver keeps them, with a reason.
    matches: list[FieldMatch] = field(default_factory=list)
    # The protected people a redaction hides, for the preview only (never in the package).
    codes: list[str] = field(default_factory=list)


# What a package leaves out, by why: the package's page and `disclosure request` head
# their lists with these words.
LEFT_OUT = (
    ("not_approved", gettext_lazy("Not approved in review: left out")),
    ("refused", gettext_lazy("Refused: left out")),
)


@dataclass
class Review:
    included: list[Line] = field(default_factory=list)
    not_approved: list[Line] = field(default_factory=list)
    refused: list[Line] = field(default_factory=list)
    # Where the package's own content ties a protected person to one it names.
    warnings: list[str] = field(default_factory=list)

    @property
    def matches(self) -> list[tuple[Line, FieldMatch]]:
        """Each whole item's field that names a protected person."""
        return [(line, m) for line in self.items for m in line.matches]

    @property
    def left_out(self) -> list[tuple[str, str, list[Line]]]:
        """(key, heading, lines) of each kind of record left out, when any is."""
        found = [(key, str(title), getattr(self, key)) for key, title in LEFT_OUT]
        return [(key, title, lines) for key, title, lines in found if lines]

    @property
    def items(self) -> list[Line]:
        return [line for line in self.included if line.kind == "item"]

    @property
    def testimonies(self) -> list[Line]:
        return [line for line in self.included if line.kind == "testimony"]


class Consents:
    """The consents given in a case, read once (two queries) for all its people."""

    def __init__(self, case: Case) -> None:
        self.case = case
        self._grants: dict[object, list[Consent]] | None = None

    def grants(self, person: Person) -> list[Consent]:
        if self._grants is None:
            self._grants = {}
            rows = Consent.objects.filter(case=self.case, kind=Consent.Kind.GRANT)
            for grant in rows.prefetch_related("withdrawals").order_by("-given_on", "-pk"):
                self._grants.setdefault(grant.person_id, []).append(grant)
        return self._grants.get(person.pk, [])

    def _refused(self, person: Person, purpose: str, recipient: str) -> str | None:
        """How ``person`` gave no consent in force for ``purpose`` ("withdrawn",
        "recipient" or "none"), else None; for sharing, the recipient must be one of the
        bodies the consent names."""
        withdrawn = False
        for grant in self.grants(person):
            if purpose not in grant.scopes:
                continue
            if purpose not in consent_in_force(grant):
                withdrawn = True
                continue
            if purpose == ConsentScope.SHARING and recipient.strip().casefold() not in {
                b.casefold() for b in grant.body_list()
            }:
                continue
            return None
        if withdrawn:
            return "withdrawn"
        return "recipient" if purpose == ConsentScope.SHARING else "none"

    def refusal(self, person: Person, purpose: str, recipient: str) -> str | None:
        """Why ``person`` gave no consent in force for ``purpose`` (else None), naming
        them by their code: for the case's members, never for a package."""
        how = self._refused(person, purpose, recipient)
        if how is None:
            return None
        said = {
            "withdrawn": _("%(code)s withdrew consent for this purpose."),
            "recipient": _("%(code)s gave no consent to share with this recipient."),
            "none": _("%(code)s gave no consent for this purpose."),
        }
        return said[how] % {"code": person.code}

    def witness_refusal(self, person: Person, purpose: str, recipient: str) -> str | None:
        """``refusal`` of a statement's witness, in words that name no one: it goes into
        the package (its ``left_out``), and the code of a witness whose consent does not
        cover the purpose would tie them to the statement."""
        how = self._refused(person, purpose, recipient)
        if how is None:
            return None
        said = {
            "withdrawn": _("The witness withdrew consent for this purpose."),
            "recipient": _("The witness gave no consent to share with this recipient."),
            "none": _("The witness gave no consent for this purpose."),
        }
        return said[how]


def named_fields(package: Package, person: Person, consents: Consents | None = None) -> list[str]:
    """The identity fields of ``person`` the package gives by name: asked by the request,
    allowed by the approver, the person under standard protection and consenting to the
    purpose (for sharing, with this recipient). Every other field is a pseudonym."""
    fields = [f for f in NAMEABLE_FIELDS if f in package.named_fields]
    fields = [f for f in fields if f in package.allowed_fields]
    if not fields or person.protection_level != Person.Protection.STANDARD:
        return []
    consents = consents or Consents(package.case)
    if consents.refusal(person, package.purpose, package.recipient) is not None:
        return []
    return fields


def _pseudonym_note(package: Package, person: Person, role: str, consents: Consents) -> str:
    named = named_fields(package, person, consents)
    if named:
        return _("%(role)s %(code)s named (%(fields)s), as allowed") % {
            "role": role,
            "code": person.code,
            "fields": ", ".join(named),
        }
    if person.protection_level != Person.Protection.STANDARD:
        why = _("%(level)s protection") % {"level": person.get_protection_level_display()}
    else:
        why = _("no named identity asked for and allowed")
    return _("%(role)s shown as %(code)s: %(why)s") % {
        "role": role,
        "code": person.code,
        "why": why,
    }


def selected(actor: Account, package: Package) -> tuple[list[EvidenceItem], list[Testimony]]:
    """The items and testimonies the selection names that ``actor`` can see at all."""
    case = package.case
    items: QuerySet[EvidenceItem] = EvidenceItem.objects.visible_to(actor).filter(case=case)
    testimonies = Testimony.objects.visible_to(actor).filter(case=case)
    kind = package.selection_kind
    if kind == Package.Selection.ALL:
        pass
    elif kind == Package.Selection.CHOSEN:
        refs = list(package.chosen)
        pks = [int(m[1]) for r in refs if (m := TESTIMONY_REF.fullmatch(r))]
        items = items.filter(reference__in=[r for r in refs if ITEM_REF.fullmatch(r)])
        testimonies = testimonies.filter(pk__in=pks)
    elif kind == Package.Selection.SEARCH:
        if package.search is None:
            raise ValidationError(_("Choose a saved search."))
        through = items.aggregate(m=Max("pk"))["m"] or 0
        query = package.search.query
        items = targets(actor, case, query=query, selection=None, through=through)
        testimonies = testimonies.none()
    else:
        links = ElementLink.objects.filter(
            case=case, element=package.element, stance=Stance.SUPPORTS, withdrawal__isnull=True
        )
        items = items.filter(pk__in=links.filter(item__isnull=False).values("item"))
        testimonies = testimonies.filter(
            pk__in=links.filter(testimony__isnull=False).values("testimony")
        )
    items = items.select_related(
        "case", "provenance", "source_person", "testimony__witness"
    ).order_by("pk")
    testimonies = testimonies.select_related("case", "witness").order_by("pk")
    return list(items), list(testimonies)


def _identifications(items: list[EvidenceItem]) -> dict[int, list[Identification]]:
    """Per item, who was identified in it and by whom (one query)."""
    found: dict[int, list[Identification]] = {}
    rows = Identification.objects.filter(item__in=[i.pk for i in items])
    for row in rows.select_related("identified", "witness").order_by("pk"):
        found.setdefault(row.item_id, []).append(row)
    return found


def _protected_in(identified: dict[int, list[Identification]]) -> dict[int, list[Person]]:
    """Per item, the people under High or Critical protection identified in it."""
    found: dict[int, list[Person]] = {}
    for item_id, rows in identified.items():
        for row in rows:
            if row.identified.protection_level != Person.Protection.STANDARD:
                found.setdefault(item_id, []).append(row.identified)
    return found


def _linkage(
    package: Package,
    out: Review,
    items: dict[int, EvidenceItem],
    identified: dict[int, list[Identification]],
    testimonies: dict[int, Testimony],
    consents: Consents,
) -> list[str]:
    """Where the package ties a protected person (High or Critical, given by code) to a
    person it gives by name: through one item (its source, the witness of the statement
    it is attached to, who is identified in it and who identified them), or through a
    kept field that names them. Whoever knows the named person can often find the other:
    a brother, a neighbour, the owner of the phone. Names count as the request asks for
    them (the approver may allow fewer)."""
    asked = package.allowed_fields if package.decided_by_id else package.named_fields
    probe = Package(case=package.case, purpose=package.purpose, recipient=package.recipient)
    probe.named_fields = probe.allowed_fields = list(asked)
    warnings = []
    for line in out.items:
        item = items[line.pk]
        people = [item.source_person]
        if item.testimony is not None:
            people.append(item.testimony.witness)
        for row in identified.get(item.pk, []):
            people += [row.identified, row.witness]
        known = {p.pk: p for p in people if p is not None}
        protected = sorted(
            p.code for p in known.values() if p.protection_level != Person.Protection.STANDARD
        )
        named = sorted(p.code for p in known.values() if named_fields(probe, p, consents))
        if protected and named:
            warnings.append(
                _(
                    "%(ref)s ties %(protected)s (under protection) to %(named)s, given by "
                    "name in this package: whoever knows %(named)s may find %(protected)s."
                )
                % {"ref": line.ref, "protected": ", ".join(protected), "named": ", ".join(named)}
            )
    spoken = {
        testimonies[line.pk].witness.code
        for line in out.testimonies
        if testimonies[line.pk].witness.protection_level != Person.Protection.STANDARD
    }
    for line, match in out.matches:
        if match.code in spoken:
            warnings.append(
                _(
                    "%(ref)s: its %(field)s names %(code)s, whose statement goes in: kept, it "
                    "puts a name to the statement."
                )
                % {"ref": line.ref, "field": match.label, "code": match.code}
            )
    return warnings


def latest_redactions(items: list[EvidenceItem]) -> dict[int, Redaction]:
    """Each item's latest redacted copy (one query)."""
    rows = Redaction.objects.filter(item__in=[i.pk for i in items]).select_related("made_by")
    return {r.item_id: r for r in rows.order_by("item_id", "pk")}


def review(actor: Account, package: Package) -> Review:
    """Each selected record: in (with what is pseudonymised and why), not approved in
    review (listed apart), or refused with the reason. A fixed number of queries."""
    items, testimonies = selected(actor, package)
    case, purpose, recipient = package.case, package.purpose, package.recipient
    consents = Consents(case)
    unread = set(withheld_testimonies(actor, case).values_list("pk", flat=True))
    out = Review()
    identified = _identifications(items)
    protected = _protected_in(identified)
    redactions = latest_redactions(items) if protected else {}
    shield = Protected(case, purpose, recipient, consents) if items else None
    for item in items:
        line = Line("item", item.pk, item.reference)
        if item.testimony_id in unread:
            line.reason = _("Attached to a statement you may not read.")
            out.refused.append(line)
            continue
        if item.review_status != EvidenceItem.ReviewStatus.APPROVED:
            line.reason = _("Not approved in review (%(status)s).") % {
                "status": item.get_review_status_display()
            }
            out.not_approved.append(line)
            continue
        if item.testimony is not None:
            witness = item.testimony.witness
            if why := consents.witness_refusal(witness, purpose, recipient):
                line.reason = _("Attached to a testimony: %(why)s") % {"why": why}
                line.codes = [witness.code]  # shown beside in the preview, never packaged
                out.refused.append(line)
                continue
        shown = [p for p in protected.get(item.pk, []) if consents.refusal(p, purpose, recipient)]
        if shown:
            # The package says "a protected person", never the code: with a statement or
            # another package that gives it, the code would say who the copy hides. The
            # preview shows the codes beside (``line.codes``).
            line.codes = sorted({p.code for p in shown})
            redaction = redactions.get(item.pk)
            if redaction is None:
                line.reason = _(
                    "Shows a protected person without consent for this purpose: only a "
                    "redacted copy may go, and none has been drawn."
                )
                out.refused.append(line)
                continue
            line.redaction = redaction.pk
            line.redactions.append(
                _(
                    "Redacted copy by %(who)s (%(n)d regions) instead of the original: shows "
                    "a protected person without consent for this purpose"
                )
                % {"who": redaction.made_by.get_username(), "n": len(redaction.regions)}
            )
        if item.source_person is not None:
            note = _pseudonym_note(package, item.source_person, _("Source"), consents)
            line.redactions.append(note)
        if line.redaction is None and shield is not None:
            line.matches = shield.matches(item)
        out.included.append(line)
    for testimony in testimonies:
        line = Line("testimony", testimony.pk, testimony_ref(testimony))
        if testimony.pk in unread:
            line.reason = _("You may not read this statement.")
            out.refused.append(line)
            continue
        if testimony.status != Testimony.Status.APPROVED:
            line.reason = _("Not approved in review (%(status)s).") % {
                "status": testimony.get_status_display()
            }
            out.not_approved.append(line)
            continue
        if why := consents.witness_refusal(testimony.witness, purpose, recipient):
            line.reason = why
            line.codes = [testimony.witness.code]  # shown beside in the preview only
            out.refused.append(line)
            continue
        line.redactions.append(_pseudonym_note(package, testimony.witness, _("Witness"), consents))
        out.included.append(line)
    out.warnings = _linkage(
        package,
        out,
        {i.pk: i for i in items},
        identified,
        {t.pk: t for t in testimonies},
        consents,
    )
    return out
