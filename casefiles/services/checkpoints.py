"""Signed audit checkpoints (docs/audit-checkpoints.md)."""

from __future__ import annotations

import base64
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured, ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from .. import audit, checkpoints, timestamps
from ..models import (
    AuditCheckpoint,
    AuditEntry,
    SigningKey,
)

if TYPE_CHECKING:
    from django.contrib.auth.models import User as Account


def create_audit_checkpoint(*, actor: Account | None = None) -> tuple[AuditCheckpoint, dict | None]:
    """Sign the Merkle root of every audit entry so far and store it.

    Returns the checkpoint and, when there is an earlier one, the consistency proof from
    it. The signing key is listed first (``register_signing_key``). Entries are
    committed in ``seq`` order and never change, so one read gives a prefix of the log
    and no lock is held while signing or asking the timestamp authority
    (``ATHAR_TSA_URL``). The checkpoint itself is then audited, as the next entry
    (outside the tree it signs).
    """
    key = checkpoints.signing_key()
    # Before the log is read: a first use or a rotation is an entry this checkpoint covers.
    register_signing_key(key, actor=actor)
    leaves = checkpoints.stored_leaves()
    if not leaves:
        raise ValidationError(_("The audit log is empty: nothing to sign."))
    size, root = checkpoints.root_of(leaves)
    row = AuditCheckpoint.objects.filter(size=size).first()
    if row is None:
        signed = checkpoints.SignedCheckpoint(settings.ATHAR_CHECKPOINT_ORIGIN, size, root)
        reply = b""
        if settings.ATHAR_TSA_URL:
            reply = timestamps.request_timestamp(settings.ATHAR_TSA_URL, signed.text().encode())
        try:
            row = _store_checkpoint(actor, signed, key, reply)
        except IntegrityError:  # a concurrent run stored this size first
            row = AuditCheckpoint.objects.get(size=size)
    previous = AuditCheckpoint.objects.filter(size__lt=size).order_by("-size").first()
    consistency = None
    if previous is not None:
        proof = checkpoints.consistency_proof(leaves, previous.size, size)
        consistency = {
            "size": previous.size,
            "root": previous.root,
            "proof": [p.hex() for p in proof],
        }
    return row, consistency


def _store_checkpoint(
    actor: Account | None, signed: Any, key: Any, reply: bytes
) -> AuditCheckpoint:
    size, root = signed.size, signed.root
    with transaction.atomic(durable=True):
        row = AuditCheckpoint.objects.create(
            size=size,
            root=root.hex(),
            origin=signed.origin,
            signed_text=signed.text(),
            signature=base64.b64encode(checkpoints.sign(signed, key)).decode(),
            public_key=checkpoints.public_pem(key.public_key()),
            timestamp_reply=base64.b64encode(reply).decode(),
        )
        audit.record(
            actor,
            "audit.checkpoint",
            target=row,
            size=size,
            root=root.hex(),
            timestamped=bool(reply),
        )
    return row


class RetiredSigningKey(ImproperlyConfigured):
    """The configured signing key was retired by a rotation: it never signs again."""


def register_signing_key(
    key: Ed25519PrivateKey | None = None, *, actor: Account | None = None
) -> SigningKey:
    """Record that ``key`` (by default the configured ``ATHAR_CHECKPOINT_KEY``) signs
    now, and return its row. Call it before each signature (checkpoint, package).

    A key seen for the first time is listed from now on; if another key was current,
    that one is retired (it keeps its first and last use) and the change is audited as
    ``audit.signing_key_rotated``, in the same durable transaction. A key already listed
    has its last use moved to now. A retired key is refused: once rotated away (lost,
    leaked, replaced), a key never signs again, and the error says since when.
    """
    key = key or checkpoints.signing_key()
    public = key.public_key()
    fingerprint = checkpoints.fingerprint(public)
    for attempt in range(2):
        try:
            return _register(fingerprint, checkpoints.public_pem(public), actor)
        except IntegrityError:  # a concurrent first use of the same key stored it first
            if attempt:
                raise
    raise AssertionError("unreachable")


def _register(fingerprint: str, pem: str, actor: Account | None) -> SigningKey:
    now = timezone.now()
    with transaction.atomic(durable=True):
        # The current key's row is locked: two rotations cannot both retire it.
        current = list(SigningKey.objects.select_for_update().filter(retired_at__isnull=True))
        row = SigningKey.objects.filter(fingerprint=fingerprint).first()
        if row is not None:
            if row.retired_at is not None:
                raise RetiredSigningKey(
                    f"ATHAR_CHECKPOINT_KEY is the signing key {fingerprint}, retired on "
                    f"{row.retired_at.isoformat(timespec='seconds')}: a retired key never "
                    "signs again. Configure the current key or a new one."
                )
            SigningKey.objects.filter(pk=row.pk).update(last_used_at=now)
            row.last_used_at = now
            return row
        for old in current:
            old.retired_at = now
            old.save(update_fields=["retired_at"])
        row = SigningKey.objects.create(
            public_key=pem, fingerprint=fingerprint, first_used_at=now, last_used_at=now
        )
        if current:
            audit.record(
                actor,
                "audit.signing_key_rotated",
                target=row,
                fingerprint=fingerprint,
                retired=[old.fingerprint for old in current],
            )
        else:
            audit.record(actor, "audit.signing_key_added", target=row, fingerprint=fingerprint)
    return row


def current_signing_key() -> SigningKey | None:
    """The listed key that signs now (not retired), or None before the first signature.
    A read: ``register_signing_key()`` is what records a use."""
    return SigningKey.objects.filter(retired_at__isnull=True).order_by("-first_used_at").first()


def signing_keys_listing() -> dict:
    """Every key the organisation has signed with, newest first, as published at
    ``/.well-known/athar-signing-keys``, on ``/keys/`` and by ``signing_key show``:
    each key's fingerprint (``checkpoints.fingerprint``), PEM, first and last use and
    status, and the command that recomputes a fingerprint from a PEM. One query."""

    def stamp(value: datetime | None) -> str | None:
        return None if value is None else value.isoformat(timespec="seconds")

    keys = [
        {
            "fingerprint": row.fingerprint,
            "public_key": row.public_key,
            "status": "current" if row.retired_at is None else "retired",
            "first_used": stamp(row.first_used_at),
            "last_used": stamp(row.last_used_at),
            "retired_at": stamp(row.retired_at),
        }
        for row in SigningKey.objects.order_by("-first_used_at", "-pk")
    ]
    return {
        "format": "athar-signing-keys/1",
        "origin": settings.ATHAR_CHECKPOINT_ORIGIN,
        "fingerprint_definition": "SHA-256 (hex) of the key's DER SubjectPublicKeyInfo",
        "fingerprint_command": checkpoints.FINGERPRINT_COMMAND,
        "keys": keys,
    }


def consistency_between(old_size: int, new_size: int | None = None) -> dict:
    """The consistency proof from the stored checkpoint of ``old_size`` to that of
    ``new_size`` (default: the newest), for a witness who cosigned the first:
    ``{"from": {"size", "root"}, "to": {"size", "root"}, "proof": [hex, ...]}``.
    ValidationError if either size is not a stored checkpoint, if they are in the wrong
    order, or if the log no longer has the roots they signed."""
    if new_size is None:
        newest = AuditCheckpoint.objects.order_by("-size").first()
        new_size = newest.size if newest is not None else 0
    rows = {r.size: r for r in AuditCheckpoint.objects.filter(size__in=[old_size, new_size])}
    for size in (old_size, new_size):
        if size not in rows:
            stored = list(
                AuditCheckpoint.objects.order_by("-size").values_list("size", flat=True)[:5]
            )
            raise ValidationError(
                _("No checkpoint of size %(size)s is stored (the newest: %(stored)s).")
                % {"size": size, "stored": ", ".join(map(str, stored)) or _("none")}
            )
    if old_size > new_size:
        raise ValidationError(_("--from must not be larger than --to."))
    leaves = checkpoints.stored_leaves()
    for size in (old_size, new_size):
        if len(leaves) < size or checkpoints.root_of(leaves[:size])[1].hex() != rows[size].root:
            raise ValidationError(
                _("The audit log no longer matches checkpoint %(size)s: run verify_audit.")
                % {"size": size}
            )
    proof = checkpoints.consistency_proof(leaves, old_size, new_size)
    return {
        "from": {"size": old_size, "root": rows[old_size].root},
        "to": {"size": new_size, "root": rows[new_size].root},
        "proof": [p.hex() for p in proof],
    }


class BrokenChain(Exception):
    """The audit chain does not verify: no checkpoint is signed over it."""


def publish_audit_checkpoint(
    *, actor: Account | None = None, out: Path | None = None
) -> tuple[AuditCheckpoint, Path]:
    """Verify the chain, sign a checkpoint of it and write its files where they are
    published (``out``, default ``$ATHAR_DATA_DIR/checkpoints``; ``latest`` follows).
    The command, the schedule and the checkpoints after reveals and builds all come here.
    """
    report = audit.verify_chain()
    if not report.ok:
        raise BrokenChain(report.summary())
    row, consistency = create_audit_checkpoint(actor=actor)
    directory = Path(out or settings.DATA_DIR / "checkpoints")
    where = Path(checkpoints.write_files(directory, checkpoints.bundle(row, consistency)))
    checkpoints.point_latest_at(directory, where)
    return row, where


@dataclass(frozen=True)
class CheckpointAge:
    """How far the newest checkpoint lags the log (``verify_audit`` reports it)."""

    last: AuditCheckpoint | None
    uncovered: int  # entries after it, its own "audit.checkpoint" entry aside
    oldest_uncovered: datetime | None
    now: datetime

    @property
    def age(self) -> timedelta | None:
        return None if self.last is None else self.now - self.last.created_at

    def overdue(self, window: timedelta) -> bool:
        """True when the log has gone unsigned longer than ``window``: the newest
        checkpoint is older than it (the schedule makes one every period, so a quiet log
        does not excuse this), or there is none and entries older than it exist."""
        if self.last is None:
            return self.oldest_uncovered is not None and self.now - self.oldest_uncovered > window
        return self.now - self.last.created_at > window

    def summary(self) -> str:
        if self.last is None:
            if self.oldest_uncovered is None:
                return "no checkpoint yet, and the log is empty"
            return (
                f"no checkpoint yet: {self.uncovered} entries unsigned, the oldest "
                f"{_minutes(self.now - self.oldest_uncovered)} old"
            )
        text = (
            f"last checkpoint: size {self.last.size}, signed "
            f"{_minutes(self.now - self.last.created_at)} ago; "
            f"{self.uncovered} entries newer than it"
        )
        if self.oldest_uncovered is not None:
            text += f", the oldest {_minutes(self.now - self.oldest_uncovered)} old"
        return text


def _minutes(delta: timedelta) -> str:
    minutes = int(delta.total_seconds() // 60)
    return f"{minutes} min" if minutes < 120 else f"{minutes // 60} h {minutes % 60} min"


def checkpoint_age() -> CheckpointAge:
    """The newest checkpoint and the entries it does not cover."""
    last = AuditCheckpoint.objects.order_by("-size").first()
    newer = AuditEntry.objects.all()
    if last is not None:
        # The checkpoint's own entry follows the tree it signs: it is not a lag.
        newer = newer.filter(seq__gt=last.size).exclude(
            action="audit.checkpoint", target_id=str(last.pk)
        )
    first = newer.order_by("seq").values_list("at", flat=True).first()
    return CheckpointAge(last, newer.count(), first, timezone.now())
