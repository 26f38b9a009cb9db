"""Signed audit checkpoints (docs/audit-checkpoints.md)."""

from __future__ import annotations

import base64
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils.translation import gettext as _

from .. import audit, checkpoints, timestamps
from ..models import (
    AuditCheckpoint,
)

if TYPE_CHECKING:
    from django.contrib.auth.models import User as Account


def create_audit_checkpoint(*, actor: Account | None = None) -> tuple[AuditCheckpoint, dict | None]:
    """Sign the Merkle root of every audit entry so far and store it.

    Returns the checkpoint and, when there is an earlier one, the consistency proof from
    it. Entries are committed in ``seq`` order and never change, so one read gives a
    prefix of the log and no lock is held while signing or asking the timestamp
    authority (``ATHAR_TSA_URL``). The checkpoint itself is then audited, as the next
    entry (outside the tree it signs).
    """
    key = checkpoints.signing_key()
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
