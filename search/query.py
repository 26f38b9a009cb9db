"""One search, as the page and ``manage.py search`` run it: what this user may see only.

Per kind, the entries of the user's cases (or the one case asked for) whose words hold
every word of the query, or whose short fields hold the query inside a word (three
characters or more); people also when a name of theirs answers the query through the
blind index, for a user who may reveal them (``search.names_index``). Records a
statement withholds from the user (``people.protection.withheld_testimonies``) are left
out. The best ``CANDIDATES`` matches by the index are ranked (``ts_rank`` on PostgreSQL,
newest first on SQLite) and the first ``limit`` shown.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.db import connection, transaction
from django.db.models import F, Q
from django.utils.safestring import SafeString

from casefiles import audit
from casefiles.access import active_membership_q, is_active_account
from casefiles.models import Case, Membership
from people.protection import withheld_testimonies

from . import kinds as registry
from . import names_index
from .lookups import rank
from .models import Entry
from .normalise import normalise
from .text import highlight, query_terms

if TYPE_CHECKING:
    from casefiles.access import User

    from .kinds import Kind

CANDIDATES = 200
LIMIT = 10
SNIPPET = 220
MIN_INSIDE = 3  # characters a query needs before it is looked for inside words
MAX_QUERY = 200


@dataclass(frozen=True)
class Hit:
    kind: str
    case: str
    reference: str
    title: SafeString
    snippet: SafeString
    url: str
    at: Any
    by_name: bool = False

    def as_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "case": self.case,
            "reference": self.reference,
            "title": str(self.title),
            "snippet": str(self.snippet),
            "url": self.url,
            "at": self.at.isoformat() if self.at else None,
            "by_name": self.by_name,
        }


@dataclass
class Group:
    kind: Kind
    hits: list[Hit]
    more: bool


@dataclass
class Results:
    query: str
    terms: list[str]
    groups: list[Group] = field(default_factory=list)


def query_digest(terms: list[str]) -> str:
    """A keyed digest of the query's words (the audit log keeps this, not the words)."""
    text = "search.query\x00" + " ".join(sorted(terms))
    return hmac.new(settings.BLIND_INDEX_KEY, text.encode("utf-8"), hashlib.sha256).hexdigest()


def _cases(user: User, case: Case | None) -> list[Case]:
    """The cases searched, each with the user's role on it (so that the protection rules
    ask no more queries about it)."""
    if not is_active_account(user):
        return []
    memberships = Membership.objects.filter(active_membership_q(), user=user).select_related("case")
    if case is not None:
        memberships = memberships.filter(case=case)
    found = []
    for m in memberships.order_by("case__reference"):
        c = m.case
        c.viewer_id, c.viewer_role = user.pk, m.role  # type: ignore[attr-defined]
        found.append(c)
    return found


def _visible(kind: Kind, user: User, cases: list[Case]) -> Q:
    if not kind.guarded:
        return Q(case__in=[c.pk for c in cases])
    q = Q(pk__in=[])
    for c in cases:
        q |= Q(case=c) & ~Q(guard__in=withheld_testimonies(user, c))
    return q


def _hits(
    kind: Kind, rows: Sequence[Entry], terms: list[str], named: set[tuple[str, int]]
) -> list[Hit]:
    return [
        Hit(
            kind=kind.name,
            case=e.case.reference,
            reference=e.reference,
            title=highlight(e.title, terms),
            snippet=highlight(e.body, terms, SNIPPET),
            url=kind.url(e),
            at=e.at,
            by_name=(e.key, e.case_id) in named,
        )
        for e in rows
    ]


ROW = ("pk", "case_id", "kind", "key", "reference", "title", "body", "at")


def _ranked(
    kind: Kind,
    user: User,
    cases: list[Case],
    terms: list[str],
    needle: str,
    named: set[tuple[str, int]],
    limit: int,
) -> Any:
    """The kind's first ``limit`` + 1 entries for the query, best first, as rows."""
    match = Q(words__has_words=terms) if terms else Q(pk__in=[])
    if len(needle) >= MIN_INSIDE:
        match |= Q(short__contains=needle)
    if kind.name == "person":
        for key, case_id in sorted(named):
            match |= Q(key=key, case_id=case_id)
    candidates = (
        Entry.objects.filter(kind=kind.name)
        .filter(_visible(kind, user, cases))
        .filter(match)
        .values("pk")[:CANDIDATES]
    )
    return (
        Entry.objects.filter(pk__in=candidates)
        .annotate(rank=rank(terms, connection.vendor), case_ref=F("case__reference"))
        .values(*ROW, "rank", "case_ref")
        .order_by("-rank", "-at", "-pk")[: limit + 1]
    )


def _entry(row: dict[str, Any]) -> Entry:
    entry = Entry(**{name: row[name] for name in ROW if name != "pk"}, pk=row["pk"])
    entry.case = Case(pk=row["case_id"], reference=row["case_ref"])
    return entry


def search(
    user: User,
    query: str,
    *,
    case: Case | None = None,
    kinds: list[str] | None = None,
    limit: int = LIMIT,
) -> Results:
    """Run ``query`` for ``user`` (within ``case``, of ``kinds``), and audit it: the keyed
    digest of its words, never the words, and how many results each kind gave."""
    query = query[:MAX_QUERY]
    terms = query_terms(query)
    needle = normalise(query)
    results = Results(query, terms)
    if not is_active_account(user) or not (terms or needle):
        return results
    cases = _cases(user, case)
    named = names_index.people_named(user, cases, query) if cases else set()
    chosen = [k for k in registry.kinds() if cases and (not kinds or k.name in kinds)]
    ranked = [_ranked(k, user, cases, terms, needle, named, limit) for k in chosen]
    if len(ranked) > 1 and connection.features.supports_slicing_ordering_in_compound:
        # PostgreSQL: the kinds' ranked pages in one statement (one round trip).
        rows = list(ranked[0].union(*ranked[1:], all=True))
        per_kind = [[r for r in rows if r["kind"] == k.name] for k in chosen]
    else:
        per_kind = [list(r) for r in ranked]
    for kind, found in zip(chosen, per_kind, strict=True):
        found.sort(key=lambda r: (-r["rank"], -(r["at"].timestamp() if r["at"] else 0), -r["pk"]))
        if found:
            entries = [_entry(r) for r in found[:limit]]
            results.groups.append(
                Group(kind, _hits(kind, entries, terms, named), len(found) > limit)
            )
    with transaction.atomic(durable=True):
        audit.record(
            user,
            "search.query",
            case=case,
            digest=query_digest(terms or [needle]),
            words=len(terms),
            kinds=sorted(kinds or []),
            found={g.kind.name: len(g.hits) for g in results.groups},
        )
    return results
