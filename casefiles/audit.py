"""The tamper-evident audit log: ``record()`` appends, ``verify_chain()`` checks.

Each entry's hash is ``SHA-256(prev_hash || canonical_json(entry))`` where ``prev_hash``
is the previous entry's hash (64 zeros for the first one) as ASCII hex, and
``canonical_json`` is UTF-8 JSON with sorted keys and no insignificant whitespace over
the fields listed in ``HASHED_FIELDS``. Appends are serialised (a PostgreSQL advisory
lock, SQLite's immediate transactions) and run inside the caller's transaction, so an
action and its audit entry commit or roll back together.
"""

from __future__ import annotations

import hashlib
import ipaddress
import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from django.core.serializers.json import DjangoJSONEncoder
from django.db import connection, transaction
from django.utils import timezone

from . import bindings
from .models import AuditEntry

if TYPE_CHECKING:
    from django.contrib.auth.base_user import AbstractBaseUser
    from django.contrib.auth.models import AnonymousUser

    from .models import Case

    # Who acts: a user (signed in or not, as ``request.user`` is), or None for the system.
    Actor = AbstractBaseUser | AnonymousUser | None

GENESIS_HASH = "0" * 64
HASHED_FIELDS = (
    "seq",
    "at",
    "actor_id",
    "actor_label",
    "action",
    "target_type",
    "target_id",
    "target_label",
    "case_id",
    "details",
    "ip",
    "user_agent",
)
# pg_advisory_xact_lock key: the bytes "athar-au" as a signed 64-bit integer.
PG_LOCK_KEY = int.from_bytes(b"athar-au", "big", signed=True)


@dataclass(frozen=True)
class RequestContext:
    ip: str | None
    user_agent: str


_request_context: ContextVar[RequestContext | None] = ContextVar("athar_request", default=None)

# Called with each entry just appended, inside the transaction of the write it records:
# what follows the writes (the search index) registers here, from its app's ready().
_followers: list[Callable[[AuditEntry], None]] = []


def follow(hook: Callable[[AuditEntry], None]) -> None:
    """Have ``hook(entry)`` called after every append, inside the writer's transaction:
    what it writes commits or rolls back with the action and its entry. The core names
    no follower; an app above it registers one (once) from its ``ready()``."""
    if hook not in _followers:
        _followers.append(hook)


def set_request_context(ctx: RequestContext | None):
    """Bind the client's address and user agent to entries recorded in this request."""
    return _request_context.set(ctx)


def reset_request_context(token) -> None:
    _request_context.reset(token)


class _Encoder(DjangoJSONEncoder):
    def default(self, o: Any) -> Any:
        if isinstance(o, set | frozenset):
            return sorted(o)
        return super().default(o)


def _clean_text(value: Any, limit: int) -> str:
    # PostgreSQL text cannot hold NUL; cut to the column size so stored == hashed.
    return str(value or "").replace("\x00", "\ufffd")[:limit]


def _clean_json(value: Any) -> Any:
    """Details as they will read back from either database: plain JSON, no floats."""

    def walk(v: Any) -> Any:
        if isinstance(v, float):
            raise TypeError("Audit details take no floats (they do not round-trip): use str.")
        if isinstance(v, str):
            return v.replace("\x00", "\ufffd")
        if isinstance(v, Mapping):
            return {walk(str(k)): walk(x) for k, x in v.items()}
        if isinstance(v, list):
            return [walk(x) for x in v]
        return v

    return walk(json.loads(json.dumps(value, cls=_Encoder)))


clean_details = _clean_json


def _clean_ip(ip: str | None) -> str | None:
    if not ip:
        return None
    try:
        return str(ipaddress.ip_address(ip.split("%")[0]))
    except ValueError:
        return None


def _canonical(doc: Any) -> bytes:
    return json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def details_sha256(details: Any) -> str:
    """The digest by which an entry's hash commits to its details.

    An export can then withhold the details (case content) from a reader who is not a
    member of the case, and the entry's hash can still be recomputed and checked.
    """
    return hashlib.sha256(_canonical(details)).hexdigest()


def canonical_json(values: Mapping[str, Any]) -> bytes:
    """The bytes an entry's hash covers, built from its stored field values."""
    at: datetime = values["at"]
    doc = {name: values[name] for name in HASHED_FIELDS if name != "details"}
    doc["details_sha256"] = values.get("details_sha256") or details_sha256(values["details"])
    doc["at"] = at.astimezone(UTC).isoformat(timespec="microseconds")
    return _canonical(doc)


def entry_hash(prev_hash: str, values: Mapping[str, Any]) -> str:
    return hashlib.sha256(prev_hash.encode("ascii") + canonical_json(values)).hexdigest()


def _lock_chain() -> None:
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", [PG_LOCK_KEY])
    # SQLite: every transaction starts with BEGIN IMMEDIATE (settings), which already
    # holds the database's single write lock.


def _label(obj: Any) -> tuple[str, str, str]:
    if obj is None:
        return "", "", ""
    meta = obj._meta
    return f"{meta.app_label}.{meta.model_name}", str(obj.pk), str(obj)


def _values(
    actor: Actor,
    action: str,
    target: Any,
    case: Case | None,
    ip: str | None,
    user_agent: str | None,
    details: dict[str, Any],
) -> dict[str, Any]:
    user = actor if actor is not None and actor.is_authenticated else None
    target_type, target_id, target_label = _label(target)
    return {
        "actor_id": user.pk if user is not None else None,
        "actor_label": _clean_text(user.get_username() if user is not None else "", 150),
        "action": _clean_text(action, 64),
        "target_type": _clean_text(target_type, 100),
        "target_id": _clean_text(target_id, 64),
        "target_label": _clean_text(target_label, 200),
        "case_id": case.pk if case is not None else None,
        "details": _clean_json(details),
        "ip": _clean_ip(ip),
        "user_agent": _clean_text(user_agent, 300),
    }


def _context(ip: str | None, user_agent: str | None) -> tuple[str | None, str | None]:
    ctx = _request_context.get()
    if ctx is not None:
        ip = ip if ip is not None else ctx.ip
        user_agent = user_agent if user_agent is not None else ctx.user_agent
    return ip, user_agent


def record(
    actor: Actor,
    action: str,
    target: Any = None,
    case: Case | None = None,
    *,
    ip: str | None = None,
    user_agent: str | None = None,
    binds: Mapping[Any, Iterable[Any]] | None = None,
    **details: Any,
) -> AuditEntry:
    """Append one entry to the audit chain, inside the caller's transaction.

    ``actor`` is a user (or None for the system / anonymous), ``target`` any model
    instance, ``case`` the case the action belongs to; ``details`` is JSON.
    Call it as the last write of a service, so the chain's lock is held briefly.
    ``binds`` names the append-only rows this action wrote (``{Model: [pk, ...]}``): the
    entry carries their content hashes (see ``bindings``), so ``verify_audit`` names any
    of them later deleted or altered.
    """
    ip, user_agent = _context(ip, user_agent)
    if binds:
        if bindings.BOUND in details:
            raise TypeError(f"'{bindings.BOUND}' is the binding's key in audit details")
        if bound := bindings.binding(binds):
            details[bindings.BOUND] = bound
    values = _values(actor, action, target, case, ip, user_agent, details)
    with transaction.atomic():
        _lock_chain()
        head = AuditEntry.objects.order_by("-seq").values_list("seq", "hash").first()
        seq, prev_hash = (head[0] + 1, head[1]) if head else (1, GENESIS_HASH)
        values = {"seq": seq, "at": timezone.now(), **values}
        entry = AuditEntry(**values, prev_hash=prev_hash, hash=entry_hash(prev_hash, values))
        entry._via_record = True
        entry.save()
        for hook in _followers:
            hook(entry)
    return entry


@dataclass(frozen=True)
class ChainReport:
    count: int
    head_seq: int | None
    head_hash: str
    broken_seq: int | None = None
    reason: str = ""

    @property
    def ok(self) -> bool:
        return self.broken_seq is None

    def summary(self) -> str:
        if self.ok:
            if not self.count:
                return "audit chain OK: no entries yet"
            return (
                f"audit chain OK: {self.count} entries, seq 1..{self.head_seq}, "
                f"head {self.head_hash}"
            )
        return f"audit chain BROKEN at seq {self.broken_seq}: {self.reason}"


def _stored_rows(chunk_size: int) -> Iterator[dict[str, Any]]:
    fields = (*HASHED_FIELDS, "prev_hash", "hash")
    for row in AuditEntry.objects.order_by("seq").values_list(*fields).iterator(chunk_size):
        yield dict(zip(fields, row, strict=True))


def verify_chain(
    chunk_size: int = 5000, on_entry: Callable[[dict[str, Any]], None] | None = None
) -> ChainReport:
    """Walk the whole chain in seq order and report the first broken link, if any.

    ``on_entry`` is given each entry (its stored fields) once its link has checked.
    """
    expected, prev_hash, count = 1, GENESIS_HASH, 0
    for row in _stored_rows(chunk_size):
        seq = row["seq"]
        if seq != expected:
            missing = seq > expected
            return ChainReport(
                count,
                expected - 1 or None,
                prev_hash,
                broken_seq=expected if missing else seq,
                reason="entry missing" if missing else "sequence out of order",
            )
        if row["prev_hash"] != prev_hash:
            return ChainReport(
                count,
                seq - 1 or None,
                prev_hash,
                seq,
                "prev_hash differs from the previous entry's hash",
            )
        if entry_hash(prev_hash, row) != row["hash"]:
            return ChainReport(
                count,
                seq - 1 or None,
                prev_hash,
                seq,
                "stored content does not match its hash",
            )
        if on_entry is not None:
            on_entry(row)
        prev_hash, expected, count = row["hash"], expected + 1, count + 1
    return ChainReport(count, expected - 1 or None, prev_hash)


def verify_log(chunk_size: int = 5000) -> tuple[ChainReport, bindings.BindingReport | None]:
    """The chain, then every append-only row it binds (when the chain is whole)."""
    with bindings.snapshot():
        rows = bindings.BindingCheck(chunk_size)
        chain = verify_chain(chunk_size, on_entry=rows.feed)
        return chain, (rows.finish() if chain.ok else None)
