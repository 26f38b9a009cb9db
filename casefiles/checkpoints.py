"""Signed Merkle checkpoints of the audit log (RFC 6962 / RFC 9162 hashing).

The tree's leaves are the audit entries in ``seq`` order; the data of leaf *i* is the
32 bytes of entry *i*'s ``hash`` (which already covers the entry's content and its
predecessor). ``leaf = SHA-256(0x00 || data)``, ``node = SHA-256(0x01 || left || right)``,
and the tree over *n* leaves splits at the largest power of two below *n* (RFC 6962 §2.1).

A checkpoint is the text ``origin\\nsize\\nroot-hex\\n`` signed with Ed25519. Anyone with the
public key can check the signature with OpenSSL; anyone with the entries' hashes can
recompute the root, check that one entry is in the tree (inclusion proof) or that a later
tree extends an earlier one (consistency proof). See docs/audit-checkpoints.md.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

EMPTY_ROOT = hashlib.sha256(b"").digest()


# Hashing ----------------------------------------------------------------------------


def leaf_hash(data: bytes) -> bytes:
    return hashlib.sha256(b"\x00" + data).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    return hashlib.sha256(b"\x01" + left + right).digest()


def _split(n: int) -> int:
    """The largest power of two smaller than ``n`` (n > 1)."""
    return 1 << ((n - 1).bit_length() - 1)


def root_of(leaves: Iterable[bytes]) -> tuple[int, bytes]:
    """(size, Merkle tree hash) of the leaf data, in one pass and O(log n) memory."""
    stack: list[tuple[int, bytes]] = []  # complete subtrees, largest first
    size = 0
    for data in leaves:
        width, digest = 1, leaf_hash(data)
        while stack and stack[-1][0] == width:
            digest = node_hash(stack.pop()[1], digest)
            width *= 2
        stack.append((width, digest))
        size += 1
    if not stack:
        return 0, EMPTY_ROOT
    digest = stack[-1][1]
    for _, left in reversed(stack[:-1]):
        digest = node_hash(left, digest)
    return size, digest


def _mth(leaves: Sequence[bytes], lo: int, hi: int) -> bytes:
    if hi - lo == 1:
        return leaf_hash(leaves[lo])
    k = _split(hi - lo)
    return node_hash(_mth(leaves, lo, lo + k), _mth(leaves, lo + k, hi))


def inclusion_proof(leaves: Sequence[bytes], index: int, size: int) -> list[bytes]:
    """The audit path of leaf ``index`` in the tree of the first ``size`` leaves."""
    if not 0 <= index < size <= len(leaves):
        raise ValueError("index must be below size, and size at most the number of leaves")
    path: list[bytes] = []
    lo, hi = 0, size
    while hi - lo > 1:
        k = _split(hi - lo)
        if index < lo + k:
            path.append(_mth(leaves, lo + k, hi))
            hi = lo + k
        else:
            path.append(_mth(leaves, lo, lo + k))
            lo += k
    return path[::-1]


def consistency_proof(leaves: Sequence[bytes], old: int, new: int) -> list[bytes]:
    """The proof that the tree of ``old`` leaves is a prefix of the tree of ``new``."""
    if not 0 < old <= new <= len(leaves):
        raise ValueError("need 0 < old <= new <= number of leaves")

    def subproof(m: int, lo: int, hi: int, whole: bool) -> list[bytes]:
        n = hi - lo
        if m == n:
            return [] if whole else [_mth(leaves, lo, hi)]
        k = _split(n)
        if m <= k:
            return [*subproof(m, lo, lo + k, whole), _mth(leaves, lo + k, hi)]
        return [*subproof(m - k, lo + k, hi, False), _mth(leaves, lo, lo + k)]

    return subproof(old, 0, new, True)


def verify_inclusion(
    data: bytes, index: int, size: int, proof: Sequence[bytes], root: bytes
) -> bool:
    """RFC 9162 §2.1.3.2."""
    if index >= size:
        return False
    fn, sn, r = index, size - 1, leaf_hash(data)
    for p in proof:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            r = node_hash(p, r)
            while not fn & 1 and fn != 0:
                fn, sn = fn >> 1, sn >> 1
        else:
            r = node_hash(r, p)
        fn, sn = fn >> 1, sn >> 1
    return sn == 0 and r == root


def verify_consistency(
    old: int, new: int, old_root: bytes, new_root: bytes, proof: Sequence[bytes]
) -> bool:
    """RFC 9162 §2.1.4.2."""
    if not 0 < old <= new:
        return False
    if old == new:
        return not proof and old_root == new_root
    path = list(proof)
    if old & (old - 1) == 0:  # a power of two: the old root is the first node
        path.insert(0, old_root)
    if not path:
        return False
    fn, sn = old - 1, new - 1
    while fn & 1:
        fn, sn = fn >> 1, sn >> 1
    fr = sr = path[0]
    for c in path[1:]:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            fr, sr = node_hash(c, fr), node_hash(c, sr)
            while not fn & 1 and fn != 0:
                fn, sn = fn >> 1, sn >> 1
        else:
            sr = node_hash(sr, c)
        fn, sn = fn >> 1, sn >> 1
    return sn == 0 and fr == old_root and sr == new_root


# Keys and signed text -------------------------------------------------------------------


def _load_private_key(text: str) -> Ed25519PrivateKey:
    raw = text.strip().encode()
    if not raw.startswith(b"-----BEGIN"):
        raw = base64.b64decode(raw, validate=True)
        if len(raw) == 32:
            return Ed25519PrivateKey.from_private_bytes(raw)
    key = serialization.load_pem_private_key(raw, password=None)
    if not isinstance(key, Ed25519PrivateKey):
        raise ImproperlyConfigured("ATHAR_CHECKPOINT_KEY must be an Ed25519 private key.")
    return key


def _development_key() -> Ed25519PrivateKey:
    """Generated once into the data dir, for development only (settings require the
    key from the environment in production)."""
    path: Path = settings.ATHAR_CHECKPOINT_KEY_FILE
    try:
        return _load_private_key(path.read_text())
    except FileNotFoundError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    pem = Ed25519PrivateKey.generate().private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:  # another process made it first
        return _load_private_key(path.read_text())
    with os.fdopen(fd, "wb") as fh:
        fh.write(pem)
    return _load_private_key(pem.decode())


def signing_key() -> Ed25519PrivateKey:
    if settings.ATHAR_CHECKPOINT_KEY:
        return _load_private_key(settings.ATHAR_CHECKPOINT_KEY)
    if settings.PRODUCTION:
        raise ImproperlyConfigured("ATHAR_CHECKPOINT_KEY is required in production.")
    return _development_key()


def public_pem(key: Ed25519PublicKey) -> str:
    return key.public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    ).decode()


# The one definition of a key's fingerprint, everywhere Athar shows one (pages, commands,
# packages, docs): the lower-case hex SHA-256 of the key's DER SubjectPublicKeyInfo.
# Anyone can recompute it from the PEM with this command (its first field).
FINGERPRINT_COMMAND = "openssl pkey -pubin -in public-key.pem -outform DER | sha256sum"


def fingerprint(public_key: Ed25519PublicKey | str) -> str:
    """SHA-256 (lower-case hex) of the DER SubjectPublicKeyInfo of ``public_key`` (a key
    or its PEM): exactly the first field that ``FINGERPRINT_COMMAND`` prints."""
    key = load_public_key(public_key) if isinstance(public_key, str) else public_key
    der = key.public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return hashlib.sha256(der).hexdigest()


def load_public_key(pem: str) -> Ed25519PublicKey:
    key = serialization.load_pem_public_key(pem.encode())
    if not isinstance(key, Ed25519PublicKey):
        raise ValueError("not an Ed25519 public key")
    return key


@dataclass(frozen=True)
class SignedCheckpoint:
    origin: str
    size: int
    root: bytes

    def text(self) -> str:
        return f"{self.origin}\n{self.size}\n{self.root.hex()}\n"

    @classmethod
    def parse(cls, text: str) -> SignedCheckpoint:
        lines = text.split("\n")
        if len(lines) != 4 or lines[3] != "" or not lines[1].isdigit():
            raise ValueError("a checkpoint is three lines: origin, size, root")
        root = bytes.fromhex(lines[2])
        if len(root) != 32 or lines[2] != root.hex():
            raise ValueError("the root must be 64 lower-case hex digits")
        return cls(lines[0], int(lines[1]), root)


def sign(checkpoint: SignedCheckpoint, key: Ed25519PrivateKey) -> bytes:
    return key.sign(checkpoint.text().encode())


def check_signature(text: str, signature: bytes, key: Ed25519PublicKey) -> bool:
    try:
        key.verify(signature, text.encode())
    except InvalidSignature:
        return False
    return True


# Reading the log ---------------------------------------------------------------------------


def stored_leaves() -> list[bytes]:
    """The leaf data of every audit entry, in seq order (32 bytes each)."""
    from .models import AuditEntry

    rows = AuditEntry.objects.order_by("seq").values_list("hash", flat=True)
    return [bytes.fromhex(h) for h in rows.iterator(chunk_size=10_000)]


def cosignature_lines(row) -> list[str]:
    """The witnesses' cosignature lines of a checkpoint row, sorted (one query)."""
    return sorted(row.cosignatures.values_list("line", flat=True))


def bundle(row, consistency: dict | None) -> dict:
    """The published form of a checkpoint row (JSON). ``cosignatures``: the sorted C2SP
    cosignature lines of witnesses (``casefiles.cosignatures``), each without its line
    feed; ``[]`` when none."""
    return {
        "format": "athar-audit-checkpoint/1",
        "origin": row.origin,
        "size": row.size,
        "root": row.root,
        "signed_text": row.signed_text,
        "signature": row.signature,
        "public_key": row.public_key,
        "timestamp_reply": row.timestamp_reply or None,
        "created_at": row.created_at.isoformat(timespec="seconds"),
        "consistency_from_previous": consistency,
        "cosignatures": cosignature_lines(row),
    }


def write_files(directory: Path, data: dict) -> Path:
    """Write the checkpoint where it can be published: JSON, and the files OpenSSL
    needs (signed text, raw signature, public key, the RFC 3161 reply if any), and the
    witnesses' cosignature lines, one per line, in ``checkpoint.cosig`` if any."""
    out = directory / f"checkpoint-{data['size']}"
    out.mkdir(parents=True, exist_ok=True)
    (out / "checkpoint.txt").write_bytes(data["signed_text"].encode())
    (out / "checkpoint.sig").write_bytes(base64.b64decode(data["signature"]))
    (out / "public-key.pem").write_text(data["public_key"])
    if data.get("timestamp_reply"):
        (out / "checkpoint.tsr").write_bytes(base64.b64decode(data["timestamp_reply"]))
    if data.get("cosignatures"):
        lines = "".join(f"{c}\n" for c in data["cosignatures"])
        (out / "checkpoint.cosig").write_text(lines, encoding="utf-8")
    text = json.dumps(data, indent=2, sort_keys=True) + "\n"
    (out / "checkpoint.json").write_text(text, encoding="utf-8")
    return out


def point_latest_at(out: Path, where: Path) -> None:
    """``<out>/latest`` names the newest checkpoint folder (a relative symbolic link,
    replaced atomically), so that commands and docs can name it without its size."""
    try:
        current = int((out / "latest").readlink().name.removeprefix("checkpoint-"))
    except (OSError, ValueError):
        current = -1
    if current > int(where.name.removeprefix("checkpoint-")):
        return  # an older checkpoint written again: latest stays on the newest
    tmp = out / f".latest-{os.getpid()}"
    tmp.unlink(missing_ok=True)
    tmp.symlink_to(where.name)
    tmp.replace(out / "latest")
