"""People found by name without their names in the clear: keyed blind indexes.

For each of a person's names (Arabic, Latin, aliases, the parts of the name) the index
keeps HMAC-SHA256 digests, under ``settings.BLIND_INDEX_KEY``, of
- each normalised word (``search.normalise``: "w:" + word), and
- each Latin name key of each part (``search.names.part_keys``: "k:" + key), which is
  the same for "Abd al-Rahman", "Abdulrahman", "عبد الرحمن" and "عبدالرحمن".
A query is keyed the same way. A person answers it when every part of the query meets
one of their keys, or every word of it one of their words. The digests say nothing
without the key; the names stay encrypted (``people.crypto``). Only people the user may
reveal (their role allows it and the person's protection level does not bar them) are
matched: anyone else learns nothing from a name typed into the box.
"""

from __future__ import annotations

import hashlib
import hmac
from collections import defaultdict
from typing import TYPE_CHECKING

from django.conf import settings

from casefiles.access import Action, can
from people.models import CaseRole, Person
from people.protection import note_interviewers, reveal_refusal

from .models import NameKey
from .names import part_keys
from .text import words

if TYPE_CHECKING:
    from casefiles.access import User
    from casefiles.models import AuditEntry, Case

MAX_PEOPLE = 200


def digest(key: str) -> str:
    text = "search.name\x00" + key
    return hmac.new(settings.BLIND_INDEX_KEY, text.encode("utf-8"), hashlib.sha256).hexdigest()


def name_digests(names: list[str]) -> set[str]:
    """The digests a person with these names is found by."""
    found: set[str] = set()
    for name in names:
        if not name.strip():
            continue
        found.update(digest("w:" + w) for w in words(name))
        for keys in part_keys(name):
            found.update(digest("k:" + k) for k in keys)
    return found


def index_person(person: Person) -> None:
    """Key this person's names again (inside the caller's transaction)."""
    wanted = name_digests(names_of(person))
    NameKey.objects.filter(person=person).exclude(digest__in=wanted).delete()
    have = set(NameKey.objects.filter(person=person).values_list("digest", flat=True))
    NameKey.objects.bulk_create([NameKey(person=person, digest=d) for d in sorted(wanted - have)])


def names_of(person: Person) -> list[str]:
    """Every name a person is known by, in the clear: opened here only to be keyed."""
    identity = person.open_identity()
    return [*identity.names(), *identity.name_part_values()]


def follow(entry: AuditEntry) -> None:
    """``casefiles.audit.follow``'s hook: a person registered or their names changed; every
    name keyed again after a key rotation (the blind index key may be the one changed)."""
    if entry.action == "people.rotate_keys":
        reindex()
    elif entry.action in FOLLOWS and entry.target_type == "people.person" and entry.target_id:
        person = Person.objects.filter(pk=entry.target_id).first()
        if person is not None:
            index_person(person)


FOLLOWS = frozenset({"people.register", "people.names"})


def reindex(case_id: int | None = None) -> int:
    people = Person.objects.all()
    if case_id is not None:
        people = people.filter(case_roles__case_id=case_id).distinct()
    count = 0
    for person in people.order_by("pk").iterator(500):
        index_person(person)
        count += 1
    return count


def _query_routes(query: str) -> list[list[set[str]]]:
    """Ways a query may meet a person: every part by its keys; every word as written."""
    routes = []
    parts = [{digest("k:" + k) for k in keys} for keys in part_keys(query)]
    if parts:
        routes.append(parts)
    query_words = [{digest("w:" + w)} for w in dict.fromkeys(words(query))]
    if query_words:
        routes.append(query_words)
    return routes


def people_named(user: User, cases: list[Case], query: str) -> set[tuple[str, int]]:
    """(person key, case id) of the people of ``cases`` a name of whom answers ``query``
    and whom ``user`` may reveal there."""
    revealing = [c for c in cases if can(user, Action.REVEAL_IDENTITY, c)]
    routes = _query_routes(query)
    if not revealing or not routes:
        return set()
    wanted = set().union(*(d for route in routes for d in route))
    by_case = {c.pk: c for c in revealing}
    rows = (
        NameKey.objects.filter(
            digest__in=sorted(wanted), person__case_roles__case__in=list(by_case)
        )
        .values_list("person_id", "digest")
        .distinct()[: MAX_PEOPLE * 50]
    )
    held: dict[str, set[str]] = defaultdict(set)
    for person_id, d in rows:
        held[str(person_id)].add(d)
    matched = [
        pk
        for pk, digests in held.items()
        if any(all(part & digests for part in route) for route in routes)
    ][:MAX_PEOPLE]
    if not matched:
        return set()
    found: set[tuple[str, int]] = set()
    roles = CaseRole.objects.filter(person_id__in=matched, case_id__in=list(by_case))
    people = {str(p.pk): p for p in Person.objects.filter(pk__in=matched)}
    note_interviewers(user, people.values(), by_case.values())  # not a query per person
    for person_id, case_id in roles.values_list("person_id", "case_id").distinct():
        person = people[str(person_id)]
        if reveal_refusal(user, person, by_case[case_id]) is None:
            found.add((str(person_id), case_id))
    return found
