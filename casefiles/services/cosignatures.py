"""Witnesses' cosignatures of checkpoints (docs/audit-checkpoints.md, "Witnesses")."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured, ValidationError
from django.db import IntegrityError, transaction

from .. import audit, checkpoints, cosignatures
from ..models import AuditCheckpoint, Cosignature

if TYPE_CHECKING:
    from django.contrib.auth.models import User as Account


def known_witnesses() -> dict[str, Ed25519PublicKey]:
    """The witnesses whose cosignatures are accepted: ``ATHAR_WITNESS_KEYS`` names a file
    of lines ``<name> <path to the witness's Ed25519 public key, PEM>`` (a path relative
    to the file's folder; blank lines and lines starting with ``#`` are skipped)."""
    if not settings.ATHAR_WITNESS_KEYS:
        return {}
    listing = Path(settings.ATHAR_WITNESS_KEYS)
    found: dict[str, Ed25519PublicKey] = {}
    try:
        lines = listing.read_text().splitlines()
        for number, raw in enumerate(lines, 1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            name, _, path = line.partition(" ")
            where = listing.parent / path.strip()
            if not path.strip() or name in found:
                raise ValueError(f"line {number}: '<name> <public key file>', each name once")
            cosignatures.key_id(name, bytes(32))  # the name is a valid note key name
            found[name] = checkpoints.load_public_key(where.read_text())
    except (OSError, ValueError) as exc:
        raise ImproperlyConfigured(f"ATHAR_WITNESS_KEYS ({listing}): {exc}") from exc
    return found


def add_cosignature(
    checkpoint: AuditCheckpoint, line: str, *, actor: Account | None = None
) -> Cosignature:
    """Verify ``line`` (a C2SP cosignature line) against the witness keys the
    organisation knows and ``checkpoint``'s signed text, then store it, audited as
    ``audit.cosignature_added``. The same line again returns the stored row; anything
    else (unknown witness, another key, another checkpoint, malformed, a second and
    different cosignature by the same witness) is refused with a ValidationError saying
    why, and nothing is stored."""
    line = line.strip("\n")
    try:
        name = cosignatures.line_name(line)
        known = known_witnesses()
        if name not in known:
            raise cosignatures.CosignatureError(
                f"no witness named {name!r} is known (ATHAR_WITNESS_KEYS lists "
                f"{', '.join(sorted(known)) or 'none'})"
            )
        t = cosignatures.verify_line(line, checkpoint.signed_text, name, known[name])
    except cosignatures.CosignatureError as exc:
        raise ValidationError(str(exc)) from exc
    fingerprint = checkpoints.fingerprint(known[name])
    existing = Cosignature.objects.filter(checkpoint=checkpoint, key_fingerprint=fingerprint)
    if (row := existing.first()) is not None:
        if row.line == line:
            return row
        raise ValidationError(f"witness {name!r} has already cosigned checkpoint {checkpoint.size}")
    try:
        with transaction.atomic(durable=True):
            row = Cosignature.objects.create(
                checkpoint=checkpoint, witness=name, key_fingerprint=fingerprint, time=t, line=line
            )
            audit.record(
                actor,
                "audit.cosignature_added",
                target=checkpoint,
                witness=name,
                key_fingerprint=fingerprint,
                time=t,
                size=checkpoint.size,
            )
    except IntegrityError as exc:  # the same witness, concurrently
        raise ValidationError(
            f"witness {name!r} has already cosigned checkpoint {checkpoint.size}"
        ) from exc
    return row


def republish_cosignatures(
    checkpoint: AuditCheckpoint, directory: Path | None = None
) -> Path | None:
    """Bring the published folder of ``checkpoint`` (under ``directory``, default
    ``$ATHAR_DATA_DIR/checkpoints``) up to date with its cosignatures: ``checkpoint.cosig``
    and the ``cosignatures`` of ``checkpoint.json``. None when it was never written there."""
    folder = Path(directory or settings.DATA_DIR / "checkpoints") / f"checkpoint-{checkpoint.size}"
    if not (folder / "checkpoint.json").exists():
        return None
    data = json.loads((folder / "checkpoint.json").read_text(encoding="utf-8"))
    data["cosignatures"] = checkpoints.cosignature_lines(checkpoint)
    checkpoints.write_files(folder.parent, data)
    return folder
