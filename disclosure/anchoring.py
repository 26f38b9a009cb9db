"""A package's audit checkpoint: an ordinary published checkpoint (stored, its files in the
checkpoints folder, audited), with the consistency proofs that tie it to the checkpoints a
recipient may already hold: the previous published one, and those of the packages sent
to the same recipient before (decision 0031).

Every proof of a build is computed from the log's leaves read once, in one tree whose
subtrees are each hashed once, whatever the number of proofs.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from django.conf import settings

from casefiles import checkpoints
from casefiles.models import AuditCheckpoint, AuditEntry
from casefiles.services.checkpoints import publish_audit_checkpoint

from .models import Package


def recipient_key(text: str) -> str:
    """A recipient's name as packages are matched by it: case aside, whitespace folded."""
    return " ".join(text.split()).casefold()


def published_folder() -> Path:
    return Path(settings.DATA_DIR) / "checkpoints"


def package_checkpoint(needed: int) -> AuditCheckpoint:
    """The newest published checkpoint when it covers the first ``needed`` entries and
    its files are in the checkpoints folder, else a new one, published as every other
    is (the chain verified first, audited, timestamped where ``ATHAR_TSA_URL`` is set)."""
    latest = AuditCheckpoint.objects.order_by("-size").first()
    if latest is not None and latest.size >= needed:
        if (published_folder() / f"checkpoint-{latest.size}" / "checkpoint.json").is_file():
            return latest
    row, _where = publish_audit_checkpoint(actor=None)
    return row


class Tree:
    """Inclusion and consistency proofs (RFC 9162) over one tree of leaves, for many
    leaves at once: each subtree hashed once."""

    def __init__(self, leaves: Sequence[bytes]) -> None:
        self.leaves = leaves
        self.memo: dict[tuple[int, int], bytes] = {}

    def mth(self, lo: int, hi: int) -> bytes:
        key = (lo, hi)
        if key not in self.memo:
            if hi - lo == 1:
                self.memo[key] = checkpoints.leaf_hash(self.leaves[lo])
            else:
                k = 1 << ((hi - lo - 1).bit_length() - 1)
                self.memo[key] = checkpoints.node_hash(self.mth(lo, lo + k), self.mth(lo + k, hi))
        return self.memo[key]

    def proof(self, index: int, size: int) -> list[bytes]:
        path, lo, hi = [], 0, size
        while hi - lo > 1:
            k = 1 << ((hi - lo - 1).bit_length() - 1)
            if index < lo + k:
                path.append(self.mth(lo + k, hi))
                hi = lo + k
            else:
                path.append(self.mth(lo, lo + k))
                lo += k
        return path[::-1]

    def consistency(self, old: int, new: int) -> list[bytes]:
        if not 0 < old <= new <= len(self.leaves):
            raise ValueError("need 0 < old <= new <= number of leaves")

        def subproof(m: int, lo: int, hi: int, whole: bool) -> list[bytes]:
            n = hi - lo
            if m == n:
                return [] if whole else [self.mth(lo, hi)]
            k = 1 << ((n - 1).bit_length() - 1)
            if m <= k:
                return [*subproof(m, lo, lo + k, whole), self.mth(lo + k, hi)]
            return [*subproof(m - k, lo + k, hi, False), self.mth(lo, lo + k)]

        return subproof(old, 0, new, True)

    def inclusion(self, entries: Sequence[AuditEntry], size: int) -> dict[str, dict]:
        """proofs.json: each entry's audit path in the tree of the first ``size`` leaves."""
        out = {}
        for entry in entries:
            index = entry.seq - 1  # seq counts from 1, with no gap (entries are never deleted)
            out[str(entry.seq)] = {
                "index": index,
                "size": size,
                "proof": [p.hex() for p in self.proof(index, size)],
            }
        return out


def _proof_doc(tree: Tree, earlier: AuditCheckpoint, size: int) -> dict:
    return {
        "size": earlier.size,
        "root": earlier.root,
        "proof": [p.hex() for p in tree.consistency(earlier.size, size)],
    }


def earlier_sizes_for(package: Package) -> set[int]:
    """The checkpoint sizes of the packages built before for the same recipient (any
    case), as their build's audit entry records them."""
    key = recipient_key(package.recipient)
    others = Package.objects.filter(status=Package.Status.READY).exclude(pk=package.pk)
    pks = [
        str(pk)
        for pk, recipient in others.values_list("pk", "recipient")
        if recipient_key(recipient) == key
    ]
    entries = AuditEntry.objects.filter(
        action="disclosure.build", target_type="disclosure.package", target_id__in=pks
    )
    return {
        size
        for details in entries.values_list("details", flat=True)
        if isinstance(size := details.get("checkpoint"), int)
    }


def checkpoint_doc(
    package: Package, checkpoint: AuditCheckpoint, tree: Tree
) -> tuple[dict, list[int]]:
    """metadata/audit/checkpoint.json: the published bundle of the checkpoint (its
    consistency from the previous published one filled in), its cosignatures, and
    ``consistency_proofs`` from the previous one and from each earlier package's
    checkpoint for the same recipient, by size. Returns it and the sizes proved from."""
    size = checkpoint.size
    previous = AuditCheckpoint.objects.filter(size__lt=size).order_by("-size").first()
    consistency = _proof_doc(tree, previous, size) if previous is not None else None
    doc = checkpoints.bundle(checkpoint, consistency)
    # Cosignatures, when the checkpoint has any, are carried in the bundle itself.
    doc.setdefault("cosignatures", [])
    wanted = {s for s in earlier_sizes_for(package) if s < size}
    rows = {row.size: row for row in AuditCheckpoint.objects.filter(size__in=wanted)}
    proofs = {s: _proof_doc(tree, row, size) for s, row in rows.items()}
    if previous is not None and consistency is not None:
        proofs[previous.size] = consistency
    doc["consistency_proofs"] = [proofs[s] for s in sorted(proofs)]
    return doc, sorted(proofs)
