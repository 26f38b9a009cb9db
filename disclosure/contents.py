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


@dataclass
class Line:
    """One record of the selection and what happens to it."""

    kind: str  # "item" or "testimony"
    pk: int
    ref: str
    reason: str = ""  # why it is left out ("" when it goes in)
    redaction: int | None = None  # the redacted copy that goes in instead of the original
    redactions: list[str] = field(default_factory=list)  # what is replaced, and why


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

    def refusal(self, person: Person, purpose: str, recipient: str) -> str | None:
        """Why ``person`` gave no consent in force for ``purpose`` (else None); for
        sharing, the recipient must be one of the bodies the consent names."""
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
            return _("%(code)s withdrew consent for this purpose.") % {"code": person.code}
        if purpose == ConsentScope.SHARING:
            return _("%(code)s gave no consent to share with this recipient.") % {
                "code": person.code
            }
        return _("%(code)s gave no consent for this purpose.") % {"code": person.code}


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
    items = items.select_related("case", "source_person", "testimony__witness").order_by("pk")
    testimonies = testimonies.select_related("case", "witness").order_by("pk")
    return list(items), list(testimonies)


def _protected_in(items: list[EvidenceItem]) -> dict[int, list[Person]]:
    """Per item, the people under High or Critical protection identified in it."""
    found: dict[int, list[Person]] = {}
    rows = Identification.objects.filter(item__in=[i.pk for i in items]).select_related(
        "identified"
    )
    for row in rows:
        if row.identified.protection_level != Person.Protection.STANDARD:
            found.setdefault(row.item_id, []).append(row.identified)
    return found


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
    protected = _protected_in(items)
    redactions = latest_redactions(items) if protected else {}
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
            if why := consents.refusal(witness, purpose, recipient):
                line.reason = _("Attached to a testimony: %(why)s") % {"why": why}
                out.refused.append(line)
                continue
        shown = [p for p in protected.get(item.pk, []) if consents.refusal(p, purpose, recipient)]
        if shown:
            codes = ", ".join(sorted({p.code for p in shown}))
            redaction = redactions.get(item.pk)
            if redaction is None:
                line.reason = _(
                    "Shows %(codes)s, under protection and without consent for this purpose: "
                    "only a redacted copy may go, and none has been drawn."
                ) % {"codes": codes}
                out.refused.append(line)
                continue
            line.redaction = redaction.pk
            line.redactions.append(
                _(
                    "Redacted copy by %(who)s (%(n)d regions) instead of the original: shows "
                    "%(codes)s, under protection and without consent for this purpose"
                )
                % {
                    "who": redaction.made_by.get_username(),
                    "n": len(redaction.regions),
                    "codes": codes,
                }
            )
        if item.source_person is not None:
            note = _pseudonym_note(package, item.source_person, _("Source"), consents)
            line.redactions.append(note)
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
        if why := consents.refusal(testimony.witness, purpose, recipient):
            line.reason = why
            out.refused.append(line)
            continue
        line.redactions.append(_pseudonym_note(package, testimony.witness, _("Witness"), consents))
        out.included.append(line)
    return out
