#!/usr/bin/env python3
"""Check an Athar disclosure package offline, with Python's standard library alone.

    python3 verify.py [BAG-DIRECTORY] [--key-fingerprint HEX] [--trusted-key PEM]
                      [--witness-key PEM] [--witnesses-required N]
                      [--previous-checkpoint PATH]
    python3 verify.py cosign --key PRIVATE.pem --name NAME --state DIR
                      (--log-key PEM | --log-fingerprint HEX) [--proof FILE] CHECKPOINT

Exit 0 when everything holds; 1, naming the first failure, otherwise. It checks:

1. the bag (RFC 8493, the Athar disclosure profile): bagit.txt, bag-info.txt with its
   required fields and Payload-Oxum, no fetch.txt, every payload file listed in the
   SHA-256 and SHA-512 manifests and no other, every digest of the manifests and of the
   tag manifests;
2. the Ed25519 signature (RFC 8032) over tagmanifest-sha256.txt (signature/ holds it and
   nothing else), with the public key in public-key.pem;
3. who signed it, when you give what you already hold (the anchors): the key must be one
   of those you name (``--key-fingerprint``, the SHA-256 of the key's DER form, as the
   sender publishes it; ``--trusted-key``); each witness you name (``--witness-key``)
   must have cosigned the package's checkpoint (C2SP tlog-cosignature); and the
   checkpoint must be consistent (RFC 9162) with one you hold from an earlier package or
   from the sender's published checkpoints (``--previous-checkpoint``). Without any of
   them the last line says that the sender was NOT checked, and how to check it;
4. the audit checkpoint: signed by the same key, and each audit entry of the package, in
   order of its seq: its hash recomputed from its content (from ``details_sha256``, the
   digest its hash covers, where its details are withheld because they name what the
   package withholds of an item sent as a redacted copy), its Merkle inclusion proof
   (RFC 9162) against the checkpoint's root, at index seq - 1, and its ``prev_hash``
   when the entry before it is in the package too;
5. each item's custody chain: each event's content hash recomputed and bound by one of
   those audit entries, each hash the chain verified equal to the file's SHA-256. An
   event bound by an entry whose details are withheld is counted and named in the
   result: the binding is in the details, which the package does not give;
6. each statement's file against testimonies.json and the audit entry that recorded its
   version's SHA-256; items.csv against items.json, cell by cell; every payload file
   belonging to exactly one item or statement.

``cosign`` is for a witness (a partner organisation, the court) who keeps a copy of the
sender's log honest: it checks a checkpoint's signature with the log's key, checks that
it extends the last one this witness cosigned (a consistency proof), refuses to go back
or to cosign a second root for one size, and prints the cosignature line.

This file is the same code as Athar's ``manage.py verify_package`` and ``manage.py
witness cosign``; it imports nothing from Athar and reads nothing but the files named.
"""

from __future__ import annotations

import argparse
import base64
import csv
import hashlib
import io
import json
import os
import re
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

ALGORITHMS = ("sha256", "sha512")
CHUNK = 1 << 20
REQUIRED_INFO = (
    "Source-Organization",
    "External-Identifier",
    "Bagging-Date",
    "Payload-Oxum",
    "Bag-Group-Identifier",
    "BagIt-Profile-Identifier",
    "Recipient",
    "Purpose",
)
SIGNED = "tagmanifest-sha256.txt"
# signature/ holds the detached signature and nothing else; what the recipient reads and
# runs (this file, VERIFY.txt, the public key) are tag files, covered by the signature.
SIGNATURE = "signature/tagmanifest-sha256.txt.sig"
PUBLIC_KEY = "public-key.pem"
COVERED = ("verify.py", "VERIFY.txt", PUBLIC_KEY, "custody-report.pdf")
CHECKPOINT = "metadata/audit/checkpoint.json"
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
CUSTODY_TABLE = "evidence_custodyevent"
TAGMANIFESTS = tuple(f"tagmanifest-{a}.txt" for a in ALGORITHMS)
# The entries Athar writes when a statement's version is recorded (its details give the
# version's SHA-256, and ``version`` for a revision; the first is version 1).
TESTIMONY_TARGET = "people.testimony"
TESTIMONY_ACTIONS = {"testimony.create": 1, "testimony.revise": None}
# What to do when the sender was not checked: said on the last line, in words.
FINGERPRINT_COMMAND = "openssl pkey -pubin -in public-key.pem -outform DER | sha256sum"
KEY_LIST = "/.well-known/athar-signing-keys"


class Failure(Exception):
    """The first thing that does not hold, in words."""


# -- Ed25519 (RFC 8032): verification (§5.1.7) and, for a witness, signing (§5.1.6) ------

_P = 2**255 - 19
_L = 2**252 + 27742317777372353535851937790883648493
_D = -121665 * pow(121666, _P - 2, _P) % _P
_SQRT_M1 = pow(2, (_P - 1) // 4, _P)


def _recover_x(y: int, sign: int) -> int | None:
    if y >= _P:
        return None
    xx = (y * y - 1) * pow(_D * y * y + 1, _P - 2, _P) % _P
    if xx == 0:
        return None if sign else 0
    x = pow(xx, (_P + 3) // 8, _P)
    if (x * x - xx) % _P:
        x = x * _SQRT_M1 % _P
    if (x * x - xx) % _P:
        return None
    return _P - x if x & 1 != sign else x


def _add(a: tuple, b: tuple) -> tuple:
    x1, y1, z1, t1 = a
    x2, y2, z2, t2 = b
    aa = (y1 - x1) * (y2 - x2) % _P
    bb = (y1 + x1) * (y2 + x2) % _P
    cc = t1 * 2 * _D * t2 % _P
    dd = z1 * 2 * z2 % _P
    e, f, g, h = bb - aa, dd - cc, dd + cc, bb + aa
    return (e * f % _P, g * h % _P, f * g % _P, e * h % _P)


def _mul(s: int, point: tuple) -> tuple:
    out = (0, 1, 1, 0)
    while s:
        if s & 1:
            out = _add(out, point)
        point = _add(point, point)
        s >>= 1
    return out


def _same(a: tuple, b: tuple) -> bool:
    return (a[0] * b[2] - b[0] * a[2]) % _P == 0 and (a[1] * b[2] - b[1] * a[2]) % _P == 0


def _point(raw: bytes) -> tuple | None:
    if len(raw) != 32:
        return None
    y = int.from_bytes(raw, "little")
    sign, y = y >> 255, y & ((1 << 255) - 1)
    x = _recover_x(y, sign)
    return None if x is None else (x, y, 1, x * y % _P)


def _encode(point: tuple) -> bytes:
    x, y, z, _ = point
    inverse = pow(z, _P - 2, _P)
    x, y = x * inverse % _P, y * inverse % _P
    return (y | (x & 1) << 255).to_bytes(32, "little")


_GY = 4 * pow(5, _P - 2, _P) % _P
_G = (_recover_x(_GY, 0), _GY, 1, (_recover_x(_GY, 0) or 0) * _GY % _P)


def ed25519_verify(public: bytes, message: bytes, signature: bytes) -> bool:
    if len(signature) != 64:
        return False
    a, r = _point(public), _point(signature[:32])
    s = int.from_bytes(signature[32:], "little")
    if a is None or r is None or s >= _L:
        return False
    h = int.from_bytes(hashlib.sha512(signature[:32] + public + message).digest(), "little")
    return _same(_mul(s, _G), _add(r, _mul(h % _L, a)))


def _expand(seed: bytes) -> tuple[int, bytes]:
    """The secret scalar (clamped) and the prefix of a 32-byte private key (§5.1.5)."""
    if len(seed) != 32:
        raise ValueError("an Ed25519 private key is 32 bytes")
    digest = hashlib.sha512(seed).digest()
    scalar = int.from_bytes(digest[:32], "little")
    scalar &= (1 << 254) - 8
    scalar |= 1 << 254
    return scalar, digest[32:]


def ed25519_public(seed: bytes) -> bytes:
    """The public key (32 bytes) of the 32-byte private key ``seed``."""
    return _encode(_mul(_expand(seed)[0], _G))


def ed25519_sign(seed: bytes, message: bytes) -> bytes:
    """RFC 8032 §5.1.6: deterministic, so the same key and message give the bytes
    OpenSSL and ``cryptography`` give. Plain Python integers, not constant-time: Athar's
    ``manage.py witness cosign`` signs with ``cryptography`` instead (same bytes)."""
    scalar, prefix = _expand(seed)
    public = _encode(_mul(scalar, _G))
    r = int.from_bytes(hashlib.sha512(prefix + message).digest(), "little") % _L
    big_r = _encode(_mul(r, _G))
    k = int.from_bytes(hashlib.sha512(big_r + public + message).digest(), "little") % _L
    return big_r + ((r + k * scalar) % _L).to_bytes(32, "little")


# -- keys: PEM, PKCS#8, the fingerprint ----------------------------------------------------

_SPKI_PREFIX = bytes.fromhex("302a300506032b6570032100")
# PKCS#8 of an Ed25519 private key, as ``openssl genpkey -algorithm ed25519`` writes it
# (RFC 8410 §7), and the v2 form that adds the public key after it.
_PKCS8_PREFIX = bytes.fromhex("302e020100300506032b657004220420")
_PKCS8_V2_PREFIX = bytes.fromhex("3051020101300506032b657004220420")
_PKCS8_V2_PUBLIC = bytes.fromhex("812100")


def fingerprint(public: bytes) -> str:
    """The key's fingerprint: SHA-256 of its DER SubjectPublicKeyInfo, what
    ``openssl pkey -pubin -in public-key.pem -outform DER | sha256sum`` prints."""
    return hashlib.sha256(_SPKI_PREFIX + public).hexdigest()


def _pem_body(text: str, label: str) -> bytes:
    found = re.search(rf"-----BEGIN {label}-----(.*?)-----END {label}-----", text, re.S)
    if not found:
        raise ValueError(f"no {label} in PEM")
    return base64.b64decode(re.sub(r"\s", "", found.group(1)), validate=True)


def public_key_from_pem(text: str) -> bytes:
    """The 32 bytes of an Ed25519 public key in PEM (SubjectPublicKeyInfo)."""
    try:
        der = _pem_body(text, "PUBLIC KEY")
    except ValueError:
        raise Failure("the public key is not an Ed25519 key in PEM") from None
    if len(der) != 44 or not der.startswith(_SPKI_PREFIX):
        raise Failure("the public key is not an Ed25519 key in PEM")
    return der[len(_SPKI_PREFIX) :]


def private_key_from_pem(text: str) -> bytes:
    """The 32-byte private key of an unencrypted Ed25519 key in PKCS#8 PEM."""
    why = (
        "not an unencrypted Ed25519 private key in PKCS#8 PEM "
        "(make one with: openssl genpkey -algorithm ed25519 -out witness-private.pem)"
    )
    try:
        der = _pem_body(text, "PRIVATE KEY")
    except ValueError:
        raise Failure(why) from None
    if len(der) == 48 and der.startswith(_PKCS8_PREFIX):
        return der[16:]
    if len(der) == 83 and der.startswith(_PKCS8_V2_PREFIX) and der[48:51] == _PKCS8_V2_PUBLIC:
        seed = der[16:48]
        if ed25519_public(seed) != der[51:]:
            raise Failure("the private key's file gives a public key that is not its own")
        return seed
    raise Failure(why)


def public_pem(public: bytes) -> str:
    body = base64.b64encode(_SPKI_PREFIX + public).decode()
    return f"-----BEGIN PUBLIC KEY-----\n{body}\n-----END PUBLIC KEY-----\n"


def normal_fingerprint(text: str) -> str:
    """A fingerprint as people paste it (``sha256sum``'s line, colons, capitals) as 64
    lower-case hex digits; ValueError when it is not one."""
    value = text.strip().lower()
    value = value.removeprefix("sha256:").removesuffix("-").strip()
    value = re.sub(r"[\s:]", "", value)
    if not re.fullmatch(r"[0-9a-f]{64}", value):
        raise ValueError(f"{text!r} is not a SHA-256 fingerprint (64 hex digits)")
    return value


# -- Merkle proofs (RFC 9162 §2.1.3.2 and §2.1.4.2) and the audit entries' hashes --------


def _leaf(data: bytes) -> bytes:
    return hashlib.sha256(b"\x00" + data).digest()


def _node(left: bytes, right: bytes) -> bytes:
    return hashlib.sha256(b"\x01" + left + right).digest()


def verify_inclusion(data: bytes, index: int, size: int, proof: list, root: bytes) -> bool:
    if index >= size:
        return False
    fn, sn, r = index, size - 1, _leaf(data)
    for p in proof:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            r = _node(p, r)
            while not fn & 1 and fn != 0:
                fn, sn = fn >> 1, sn >> 1
        else:
            r = _node(r, p)
        fn, sn = fn >> 1, sn >> 1
    return sn == 0 and r == root


def verify_consistency(old: int, new: int, old_root: bytes, new_root: bytes, proof: list) -> bool:
    """Whether the tree of ``new`` leaves extends the tree of ``old`` leaves."""
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
            fr, sr = _node(c, fr), _node(c, sr)
            while not fn & 1 and fn != 0:
                fn, sn = fn >> 1, sn >> 1
        else:
            sr = _node(sr, c)
        fn, sn = fn >> 1, sn >> 1
    return sn == 0 and fr == old_root and sr == new_root


def canonical(doc: object) -> bytes:
    return json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def withheld(entry: dict) -> bool:
    """Whether the package gives an entry's details only by their digest."""
    return "details_sha256" in entry


def entry_hash(entry: dict) -> str:
    """``SHA-256(prev_hash || canonical JSON of the entry)``, the details by their digest:
    computed from them, or the one given in their place when they are withheld."""
    doc = {name: entry[name] for name in HASHED_FIELDS if name != "details"}
    if withheld(entry):
        doc["details_sha256"] = entry["details_sha256"]
    else:
        doc["details_sha256"] = hashlib.sha256(canonical(entry["details"])).hexdigest()
    return hashlib.sha256(entry["prev_hash"].encode("ascii") + canonical(doc)).hexdigest()


def row_hash(columns: dict) -> str:
    return hashlib.sha256(canonical(columns)).hexdigest()


# -- the bag -----------------------------------------------------------------------------


def _digests(path: Path) -> dict[str, str]:
    found = {a: hashlib.new(a) for a in ALGORITHMS}
    with path.open("rb") as fh:
        while chunk := fh.read(CHUNK):
            for h in found.values():
                h.update(chunk)
    return {a: h.hexdigest() for a, h in found.items()}


def _manifest(bag: Path, name: str) -> dict[str, str]:
    path = bag / name
    if not path.is_file():
        raise Failure(f"{name} is missing")
    listed: dict[str, str] = {}
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        digest, sep, file = line.partition(" ")
        file = file.lstrip(" *")
        if not sep or not file or not re.fullmatch(r"[0-9a-f]+", digest):
            raise Failure(f"{name} line {n} is not 'digest path'")
        if file in listed or file.startswith("/") or ".." in Path(file).parts:
            raise Failure(f"{name} line {n} names {file!r} twice or outside the bag")
        listed[file] = digest
    return listed


def _bag_info(bag: Path) -> dict[str, str]:
    info: dict[str, str] = {}
    key = ""
    for line in (bag / "bag-info.txt").read_text(encoding="utf-8").splitlines():
        if line[:1] in (" ", "\t") and key:
            info[key] += " " + line.strip()
            continue
        key, _, value = line.partition(":")
        key = key.strip()
        info[key] = value.strip()
    return info


def check_bag(bag: Path, payload_digests: dict[str, dict] | None = None) -> dict[str, dict]:
    """The bag's structure and every digest of its manifests; its payload digests.
    ``payload_digests`` (``{path: {sha256, sha512, size}}``, what a build took while it
    wrote the payload) stand for the payload files, which are then not read."""
    if (bag / "fetch.txt").exists():
        raise Failure("fetch.txt is not allowed by the profile")
    declaration = (bag / "bagit.txt").read_bytes() if (bag / "bagit.txt").is_file() else b""
    if declaration != b"BagIt-Version: 1.0\nTag-File-Character-Encoding: UTF-8\n":
        raise Failure("bagit.txt is missing or not the BagIt 1.0 declaration")
    if not (bag / "bag-info.txt").is_file():
        raise Failure("bag-info.txt is missing")
    info = _bag_info(bag)
    for name in REQUIRED_INFO:
        if not info.get(name):
            raise Failure(f"bag-info.txt has no {name}")
    if payload_digests is None:
        payload = sorted(
            p.relative_to(bag).as_posix() for p in (bag / "data").rglob("*") if p.is_file()
        )
    else:
        payload = sorted(payload_digests)
    manifests = {a: _manifest(bag, f"manifest-{a}.txt") for a in ALGORITHMS}
    for algorithm, listed in manifests.items():
        if sorted(listed) != payload:
            extra = sorted(set(payload) ^ set(listed))
            raise Failure(f"manifest-{algorithm}.txt does not list the payload: {extra[0]}")
    actual = {}
    for file in payload:
        actual[file] = _digests(bag / file) if payload_digests is None else payload_digests[file]
        for algorithm in ALGORITHMS:
            if actual[file][algorithm] != manifests[algorithm][file]:
                raise Failure(f"{file}: its {algorithm} differs from manifest-{algorithm}.txt")
    if payload_digests is None:
        total = sum((bag / f).stat().st_size for f in payload)
    else:
        total = sum(int(d["size"]) for d in payload_digests.values())
    if info["Payload-Oxum"] != f"{total}.{len(payload)}":
        raise Failure("bag-info.txt: Payload-Oxum does not match the payload")
    for algorithm in ALGORITHMS:
        tags = _manifest(bag, f"tagmanifest-{algorithm}.txt")
        for required in (
            "bagit.txt",
            "bag-info.txt",
            *(f"manifest-{a}.txt" for a in ALGORITHMS),
            *COVERED,
        ):
            if required not in tags:
                raise Failure(f"tagmanifest-{algorithm}.txt does not list {required}")
        for file, digest in tags.items():
            if file.startswith("data/") or file.startswith("signature/"):
                raise Failure(f"tagmanifest-{algorithm}.txt lists {file}, not a tag file")
            if not (bag / file).is_file():
                raise Failure(f"{file} is listed in tagmanifest-{algorithm}.txt but missing")
            if _digests(bag / file)[algorithm] != digest:
                raise Failure(f"{file}: its {algorithm} differs from tagmanifest-{algorithm}.txt")
    tagged = set(_manifest(bag, "tagmanifest-sha256.txt"))
    for path in sorted(bag.rglob("*")):
        name = path.relative_to(bag).as_posix()
        if path.is_dir() or name.startswith("data/"):
            continue
        if name.startswith("signature/"):
            if name != SIGNATURE:
                raise Failure(f"{name}: signature/ holds the signature alone")
        elif not name.startswith("tagmanifest-") and name not in tagged:
            raise Failure(f"{name} is in the bag but in no tag manifest")
        elif name.startswith("tagmanifest-") and name not in TAGMANIFESTS:
            raise Failure(f"{name} is in the bag but in no tag manifest")
    return actual


def check_signature(bag: Path) -> bytes:
    """The signature over tagmanifest-sha256.txt; returns the public key."""
    for name in (SIGNATURE, PUBLIC_KEY):
        if not (bag / name).is_file():
            raise Failure(f"{name} is missing")
    public = public_key_from_pem((bag / PUBLIC_KEY).read_text(encoding="ascii"))
    if not ed25519_verify(public, (bag / SIGNED).read_bytes(), (bag / SIGNATURE).read_bytes()):
        raise Failure(f"{SIGNATURE}: the signature over {SIGNED} does not verify")
    return public


def _json(bag: Path, name: str) -> object:
    try:
        return json.loads((bag / name).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise Failure(f"{name} is missing") from None
    except ValueError:
        raise Failure(f"{name} is not JSON") from None


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


# -- anchors: what the recipient already holds ------------------------------------------


@dataclass
class Anchors:
    """What the verifier is given from outside the package: the sender's keys (by
    fingerprint or as PEM), witnesses' keys, and checkpoints held from before."""

    fingerprints: list[str] = field(default_factory=list)
    keys: list[bytes] = field(default_factory=list)
    witnesses: list[bytes] = field(default_factory=list)
    witnesses_required: int | None = None
    previous: list[Path] = field(default_factory=list)

    @property
    def sender(self) -> bool:
        """Whether the sender's key is anchored (the only check of who made the package)."""
        return bool(self.fingerprints or self.keys)

    def trusted(self) -> set[str]:
        return set(self.fingerprints) | {fingerprint(k) for k in self.keys}


def check_sender(public: bytes, anchors: Anchors) -> str:
    """The package's key is one of the keys the recipient holds."""
    found, trusted = fingerprint(public), anchors.trusted()
    if found not in trusted:
        raise Failure(
            f"the package is signed by the key with fingerprint {found}, which is none of "
            f"the keys you gave ({', '.join(sorted(trusted))}): it was not signed by the "
            "sender you expect; do not rely on its contents, and ask the sender, through a "
            "channel you trust, which keys they sign with"
        )
    return (
        f"Sender checked: the package is signed by the key with fingerprint {found}, one "
        "of the keys you gave."
    )


@dataclass(frozen=True)
class Checkpoint:
    """A signed checkpoint (``origin\\nsize\\nroot\\n``) and the JSON it came in."""

    origin: str
    size: int
    root: bytes
    text: str
    public: bytes
    doc: dict
    where: str


def read_checkpoint(doc: object, where: str) -> Checkpoint:
    """A checkpoint's JSON (``casefiles.checkpoints.bundle``): its signed text parsed, its
    signature checked with the key it names, its other fields equal to the signed ones."""
    if not isinstance(doc, dict):
        raise Failure(f"{where} is not a checkpoint")
    text = str(doc.get("signed_text", ""))
    lines = text.split("\n")
    if (
        len(lines) != 4
        or lines[3]
        or not lines[0]
        or not re.fullmatch(r"[1-9][0-9]*", lines[1])
        or not re.fullmatch(r"[0-9a-f]{64}", lines[2])
    ):
        raise Failure(f"{where}: the signed text is not a checkpoint")
    origin, size, root = lines[0], int(lines[1]), lines[2]
    try:
        public = public_key_from_pem(str(doc.get("public_key", "")))
        signature = base64.b64decode(str(doc.get("signature", "")), validate=True)
    except (Failure, ValueError):
        raise Failure(f"{where}: its public key or signature cannot be read") from None
    if not ed25519_verify(public, text.encode(), signature):
        raise Failure(f"{where}: the checkpoint's signature does not verify")
    for name, value in (("origin", origin), ("size", size), ("root", root)):
        if name in doc and doc[name] != value:
            raise Failure(f"{where}: its {name} is not the one its signed text gives")
    return Checkpoint(origin, size, bytes.fromhex(root), text, public, doc, where)


def load_checkpoint(path: Path) -> Checkpoint:
    """A checkpoint held outside the package: a package's folder (its
    metadata/audit/checkpoint.json), a published checkpoint's folder (its
    checkpoint.json), or such a JSON file itself."""
    file = path
    if path.is_dir():
        for name in (CHECKPOINT, "checkpoint.json"):
            if (path / name).is_file():
                file = path / name
                break
        else:
            raise Failure(
                f"{path}: no checkpoint there (neither a package's {CHECKPOINT} nor a "
                "published checkpoint's checkpoint.json)"
            )
    try:
        doc = json.loads(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise Failure(f"{path}: no such file or folder") from None
    except (ValueError, OSError):
        raise Failure(f"{file}: not a checkpoint's JSON") from None
    return read_checkpoint(doc, str(file))


def consistency_proofs(doc: dict) -> list[dict]:
    """The consistency proofs a checkpoint carries: from the previous published one,
    and (a package's) from earlier ones, each ``{"size", "root", "proof"}``."""
    found = []
    previous = doc.get("consistency_from_previous")
    if isinstance(previous, dict):
        found.append(previous)
    more = doc.get("consistency_proofs")
    if isinstance(more, list):
        found += [p for p in more if isinstance(p, dict)]
    return found


def _hashes(values: object, where: str) -> list[bytes]:
    if not isinstance(values, list) or not all(
        isinstance(v, str) and re.fullmatch(r"[0-9a-f]{64}", v) for v in values
    ):
        raise Failure(f"{where}: a proof is not a list of SHA-256 hashes in hex")
    return [bytes.fromhex(v) for v in values]


def extends(old: tuple[int, bytes], new: Checkpoint, proofs: list[dict]) -> bool | None:
    """Whether one of ``proofs`` (each from its ``size``) shows ``new`` extends the tree
    ``old`` (size, root): True; False when some start from ``old``'s size and none holds;
    None when none starts from it."""
    size, root = old
    starting = [p for p in proofs if p.get("size") == size]
    if not starting:
        return None
    for proof in starting:
        path = _hashes(proof.get("proof", []), new.where)
        if proof.get("root") == root.hex() and verify_consistency(
            size, new.size, root, new.root, path
        ):
            return True
    return False


def check_previous(package: Checkpoint, path: Path, anchors: Anchors) -> str:
    """The package's checkpoint is consistent with one the recipient holds (the same when
    of the same size; else a proof, carried by the newer of the two, from the older)."""
    held = load_checkpoint(path)
    where = held.where
    if held.origin != package.origin:
        raise Failure(
            f"{where}: a checkpoint of the log {held.origin!r}, not of {package.origin!r}, "
            "the package's"
        )
    if anchors.sender and fingerprint(held.public) not in anchors.trusted():
        raise Failure(
            f"{where}: the checkpoint you hold is signed by the key with fingerprint "
            f"{fingerprint(held.public)}, which is none of the keys you gave"
        )
    if held.size == package.size:
        if held.root != package.root:
            raise Failure(
                f"the package's checkpoint has the size of the one you hold ({where}, size "
                f"{held.size}) but another root ({package.root.hex()}, where yours has "
                f"{held.root.hex()}): the log was rewritten, or the package is not the "
                "sender's"
            )
        return (
            f"Previous checkpoint: the package's is the one you hold ({where}, size {held.size})."
        )
    older, newer = (held, package) if held.size < package.size else (package, held)
    found = extends((older.size, older.root), newer, consistency_proofs(newer.doc))
    if found is None:
        if newer is package:
            raise Failure(
                f"the package carries no consistency proof from the checkpoint you hold "
                f"({where}, size {held.size}): it cannot be shown to extend it"
            )
        raise Failure(
            f"the checkpoint you hold ({where}, size {held.size}) is newer than the "
            f"package's (size {package.size}) and carries no consistency proof from it"
        )
    if not found:
        raise Failure(
            f"the package's checkpoint (size {package.size}, root {package.root.hex()}) is "
            f"not consistent with the one you hold ({where}, size {held.size}, root "
            f"{held.root.hex()}): the log was rewritten, or the package is not the sender's"
        )
    return (
        f"Previous checkpoint: the package's (size {package.size}) is consistent with the "
        f"one you hold ({where}, size {held.size}): the log was only appended to."
    )


# -- cosignatures (C2SP tlog-cosignature, cosignature/v1) --------------------------------

COSIGNATURE_KEY_TYPE = b"\x04"
DASH = "\u2014"  # a note's signature lines start with an em dash and a space


def cosignature_key_id(name: str, public: bytes) -> bytes:
    return hashlib.sha256(name.encode() + b"\n" + COSIGNATURE_KEY_TYPE + public).digest()[:4]


def cosigned_message(when: int, body: str) -> bytes:
    """What a witness signs: the header, the time, then the checkpoint's signed text."""
    return f"cosignature/v1\ntime {when}\n".encode() + body.encode()


def cosignature_line(name: str, public: bytes, when: int, signature: bytes) -> str:
    blob = cosignature_key_id(name, public) + when.to_bytes(8, "big") + signature
    return f"{DASH} {name} {base64.b64encode(blob).decode()}"


@dataclass(frozen=True)
class Cosignature:
    name: str
    key_id: bytes
    time: int
    signature: bytes


def parse_cosignature(line: object) -> Cosignature | None:
    """A cosignature/v1 line, or None (another kind of signature line, or not one)."""
    if not isinstance(line, str) or not line.startswith(DASH + " "):
        return None
    name, _, blob = line[2:].rpartition(" ")
    try:
        raw = base64.b64decode(blob, validate=True)
    except ValueError:
        return None
    if not name or len(raw) != 4 + 8 + 64:
        return None
    return Cosignature(name, raw[:4], int.from_bytes(raw[4:12], "big"), raw[12:])


def _utc(when: int) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(when))


def check_witnesses(checkpoint: Checkpoint, witnesses: list[bytes], required: int) -> str:
    """At least ``required`` of the witnesses' keys cosigned the checkpoint."""
    lines = checkpoint.doc.get("cosignatures") or []
    if not isinstance(lines, list):
        raise Failure(f"{checkpoint.where}: its cosignatures are not a list of lines")
    found = [c for c in map(parse_cosignature, lines) if c is not None]
    good, missing = [], []
    for key in witnesses:
        fp = fingerprint(key)
        mine = [c for c in found if c.key_id == cosignature_key_id(c.name, key)]
        valid = [
            c
            for c in mine
            if ed25519_verify(key, cosigned_message(c.time, checkpoint.text), c.signature)
        ]
        if valid:
            good.append(f"{valid[0].name} (key fingerprint {fp}, at {_utc(valid[0].time)})")
        elif mine:
            missing.append(
                f"the cosignature of witness {mine[0].name} (key fingerprint {fp}) does not "
                "verify over this checkpoint"
            )
        else:
            missing.append(f"no cosignature by the witness key with fingerprint {fp}")
    if len(good) < required:
        raise Failure(
            f"{checkpoint.where}: the checkpoint (size {checkpoint.size}) is cosigned by "
            f"{len(good)} of the witnesses you gave, {required} required: {'; '.join(missing)}"
        )
    return (
        f"Witnesses checked: the checkpoint (size {checkpoint.size}) is cosigned by "
        f"{', '.join(good)}."
    )


# -- the audit excerpt, the custody chains, the statements, the tables -------------------


def check_checkpoint(bag: Path, public: bytes) -> Checkpoint:
    """The package's checkpoint, signed by the package's own key."""
    checkpoint = read_checkpoint(_json(bag, CHECKPOINT), CHECKPOINT)
    if checkpoint.public != public:
        raise Failure(f"{CHECKPOINT}: signed by another key than the package")
    return checkpoint


def check_entries(bag: Path, size: int, root: bytes) -> dict[int, dict]:
    """Each entry's hash, its link to the entry before it when the package holds that
    one too, and its inclusion proof (at index seq - 1) against the checkpoint's root."""
    entries: dict[int, dict] = {}
    path = bag / "metadata/audit/entries.jsonl"
    if not path.is_file():
        raise Failure("metadata/audit/entries.jsonl is missing")
    last = 0
    for line in path.read_text(encoding="utf-8").splitlines():
        entry = json.loads(line)
        seq = entry["seq"]
        if not isinstance(seq, int) or seq <= last:
            raise Failure(f"metadata/audit/entries.jsonl: entry #{seq} is out of order or twice")
        if withheld(entry) and not (
            re.fullmatch(r"[0-9a-f]{64}", str(entry["details_sha256"]))
            and isinstance(entry["details"], str)
            and entry["details"].startswith("withheld")
        ):
            raise Failure(f"audit entry #{seq}: details_sha256 stands beside details not withheld")
        entries[seq], last = entry, seq
    proofs = _json(bag, "metadata/audit/proofs.json")
    if not isinstance(proofs, dict):
        raise Failure("metadata/audit/proofs.json is not a list of proofs")
    for seq, entry in sorted(entries.items()):
        if entry_hash(entry) != entry["hash"]:
            raise Failure(f"audit entry #{seq}: its hash does not match its content")
        before = entries.get(seq - 1)
        if before is not None and entry["prev_hash"] != before["hash"]:
            raise Failure(f"audit entry #{seq}: its prev_hash is not the hash of entry #{seq - 1}")
        proof = proofs.get(str(seq))
        if not isinstance(proof, dict):
            raise Failure(f"audit entry #{seq}: no inclusion proof")
        if proof.get("index") != seq - 1:
            raise Failure(
                f"audit entry #{seq}: its inclusion proof is for index {proof.get('index')}, "
                f"not {seq - 1} (an entry's index is its seq - 1)"
            )
        path_hashes = _hashes(proof.get("proof", []), f"audit entry #{seq}")
        if proof.get("size") != size or not verify_inclusion(
            bytes.fromhex(entry["hash"]), seq - 1, size, path_hashes, root
        ):
            raise Failure(f"audit entry #{seq}: its inclusion proof does not verify")
    return entries


def check_audit(bag: Path, public: bytes) -> dict[int, dict]:
    """The checkpoint's signature, each entry's hash and its inclusion proof."""
    checkpoint = check_checkpoint(bag, public)
    return check_entries(bag, checkpoint.size, checkpoint.root)


def _item_file(item: dict) -> tuple[str, str]:
    """The payload file of an item of items.json, and the SHA-256 it must have."""
    export_id, sha256 = item["export_id"], item["sha256"]
    redaction = item.get("redaction")
    if isinstance(redaction, dict):  # a redacted copy went instead of the original
        file, expected = f"data/{item['payload']}", redaction["sha256"]
        if not file.startswith("data/redacted/") or redaction["original_sha256"] != sha256:
            raise Failure(f"metadata/items.json: {export_id}'s redacted copy is misnamed")
        return file, expected
    return f"data/originals/{item['file']}", sha256


def _items(bag: Path) -> list[dict]:
    items = _json(bag, "metadata/items.json")
    if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
        raise Failure("metadata/items.json is not a list of items")
    return items


def check_custody(bag: Path, entries: dict[int, dict], payload: dict) -> tuple[int, int]:
    """Each item's custody chain, bound by the audit entries; returns the items checked
    and the events bound by an entry whose details (the binding) are withheld."""
    unshown = 0
    items = _items(bag)
    for item in items:
        export_id, sha256 = item["export_id"], item["sha256"]
        file, expected = _item_file(item)
        if payload.get(file, {}).get("sha256") != expected:
            raise Failure(f"{file}: not the SHA-256 metadata/items.json records for {export_id}")
        chain = _json(bag, f"metadata/custody/{export_id}.json")
        if not isinstance(chain, dict) or not chain.get("events"):
            raise Failure(f"metadata/custody/{export_id}.json has no custody events")
        for event in chain["events"]:
            columns, pk = event["columns"], event["columns"].get("id")
            where = f"metadata/custody/{export_id}.json event {pk}"
            if row_hash(columns) != event["row_hash"]:
                raise Failure(f"{where}: its content hash does not match")
            entry = entries.get(event.get("bound_by"))
            if entry is not None and withheld(entry):
                unshown += 1  # its hash holds; what it binds is in the withheld details
            else:
                bound = (entry or {}).get("details", {}).get("bound", {}).get(CUSTODY_TABLE, {})
                if bound.get("rows", {}).get(str(pk)) != event["row_hash"]:
                    raise Failure(f"{where}: no audit entry of the package binds it")
            if columns.get("sha256") and columns["sha256"] != sha256:
                raise Failure(f"{where}: verified another file than {export_id}")
    return len(items), unshown


def _testimonies(bag: Path) -> list[dict]:
    rows = _json(bag, "metadata/testimonies.json")
    if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
        raise Failure("metadata/testimonies.json is not a list of statements")
    for row in rows:
        file = str(row.get("file", ""))
        if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", file) or ".." in file:
            raise Failure(f"metadata/testimonies.json: {row.get('export_id')} names no file")
    return rows


def _recorded(entry: dict, sha256: str, version: object) -> bool:
    """Whether the entry is the one that recorded this version of a statement."""
    action, details = entry.get("action"), entry.get("details")
    if withheld(entry) or action not in TESTIMONY_ACTIONS or not isinstance(details, dict):
        return False
    number = TESTIMONY_ACTIONS[action] or details.get("version")
    return details.get("sha256") == sha256 and number == version


def check_testimonies(bag: Path, entries: dict[int, dict], payload: dict) -> tuple[int, int]:
    """Each statement's file has the SHA-256 testimonies.json gives, and an audit entry of
    the package (its creation or the revision that made that version) recorded it.
    Returns the statements checked and those whose entries' details are withheld."""
    about: dict[str, list[dict]] = {}
    for entry in entries.values():
        if entry.get("target_type") == TESTIMONY_TARGET:
            about.setdefault(str(entry.get("target_id")), []).append(entry)
    unshown = 0
    rows = _testimonies(bag)
    for row in rows:
        export_id, sha256, version = row.get("export_id"), row.get("sha256"), row.get("version")
        file = f"data/testimony/{row['file']}"
        if file not in payload:
            raise Failure(
                f"{file}: metadata/testimonies.json lists it for {export_id}, but the bag "
                "holds no such file"
            )
        if payload[file]["sha256"] != sha256:
            raise Failure(
                f"{file}: not the SHA-256 metadata/testimonies.json records for {export_id}"
            )
        ref = str(row.get("reference", ""))
        number = re.fullmatch(r"T-0*([0-9]+)", ref)
        if number is None:
            raise Failure(
                f"metadata/testimonies.json: {export_id}'s reference {ref!r} is not T-<number>"
            )
        mine = about.get(str(int(number.group(1))), [])
        if any(_recorded(entry, sha256, version) for entry in mine):
            continue
        if any(withheld(entry) for entry in mine):
            unshown += 1  # the entry that recorded it may be one given by its digest
            continue
        raise Failure(
            f"{file}: no audit entry of the package records its SHA-256 for {ref} version "
            f"{version} (metadata/testimonies.json, {export_id})"
        )
    return len(rows), unshown


_FORMULA = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(value: object) -> str:
    """An items.json value as items.csv writes it: lists and objects as JSON, and a cell a
    spreadsheet would run as a formula quoted with a leading ``'`` (decision 0015)."""
    if isinstance(value, (dict, list)):
        value = json.dumps(value, ensure_ascii=False, sort_keys=True)
    text = "" if value is None else str(value)
    return f"'{text}" if text.startswith(_FORMULA) else text


def check_items_csv(bag: Path) -> None:
    """items.csv says what items.json says: the same items in the same order, the same
    columns, each cell the value's text."""
    items = _items(bag)
    try:
        text = (bag / "metadata/items.csv").read_bytes().decode("utf-8")
    except FileNotFoundError:
        raise Failure("metadata/items.csv is missing") from None
    except UnicodeDecodeError:
        raise Failure("metadata/items.csv is not UTF-8") from None
    try:
        rows = list(csv.reader(io.StringIO(text, newline="")))
    except csv.Error as exc:
        raise Failure(f"metadata/items.csv cannot be read as CSV: {exc}") from None
    if not rows:
        raise Failure("metadata/items.csv is empty")
    header, body = rows[0], rows[1:]
    if len(set(header)) != len(header):
        raise Failure("metadata/items.csv names a column twice")
    if len(body) != len(items):
        raise Failure(
            f"metadata/items.csv has {len(body)} rows where metadata/items.json has "
            f"{len(items)} items"
        )
    for n, (cells, item) in enumerate(zip(body, items), 1):  # noqa: B905 (Python 3.9)
        where = f"metadata/items.csv row {n} ({item.get('export_id')})"
        if len(cells) != len(header):
            raise Failure(f"{where}: {len(cells)} cells under {len(header)} columns")
        for name in sorted(set(item) ^ set(header)):
            lacking = "metadata/items.csv" if name in item else "metadata/items.json"
            raise Failure(f"{where}: {lacking} has no {name}")
        for name, cell in zip(header, cells):  # noqa: B905 (Python 3.9: no strict)
            if cell != csv_cell(item[name]):
                raise Failure(
                    f"{where}, column {name}: {_short(cell)} where metadata/items.json has "
                    f"{_short(csv_cell(item[name]))}"
                )


def check_claims(bag: Path, payload: dict) -> None:
    """Every payload file is the file of exactly one item or statement."""
    claims: dict[str, list[str]] = {}
    for item in _items(bag):
        claims.setdefault(_item_file(item)[0], []).append(str(item.get("export_id")))
    for row in _testimonies(bag):
        claims.setdefault(f"data/testimony/{row['file']}", []).append(str(row.get("export_id")))
    for file in sorted(payload):
        who = claims.get(file, [])
        if not who:
            raise Failure(
                f"{file}: the file of no item of metadata/items.json and no statement of "
                "metadata/testimonies.json"
            )
        if len(who) > 1:
            raise Failure(f"{file}: the file of {' and of '.join(who)}; a file belongs to one")


def not_checked(public: bytes) -> str:
    return (
        "The sender's identity was NOT checked: anyone can make a package that passes "
        "every check above by signing it with their own key. Get the sender's key "
        f"fingerprint from their published key list (their {KEY_LIST} page, or from them "
        "in person) and run this again with --key-fingerprint HEX, or compare it with what "
        f"`{FINGERPRINT_COMMAND}` prints: this package's key is {fingerprint(public)}."
    )


def verify(
    bag: Path, anchors: Anchors | None = None, *, payload_digests: dict[str, dict] | None = None
) -> str:
    """Everything above, in order; raises ``Failure`` at the first thing that fails.
    Returns the result in lines, the last of them saying whether the sender was checked.
    ``payload_digests``: see ``check_bag`` (a build's self-check)."""
    anchors = anchors or Anchors()
    if not bag.is_dir():
        raise Failure(f"{bag} is not a directory")
    payload = check_bag(bag, payload_digests)
    public = check_signature(bag)
    said = []
    sender = check_sender(public, anchors) if anchors.sender else ""
    checkpoint = check_checkpoint(bag, public)
    if anchors.witnesses:
        required = anchors.witnesses_required or len(anchors.witnesses)
        said.append(check_witnesses(checkpoint, anchors.witnesses, required))
    for path in anchors.previous:
        said.append(check_previous(checkpoint, path, anchors))
    entries = check_entries(bag, checkpoint.size, checkpoint.root)
    items, unshown = check_custody(bag, entries, payload)
    statements, unrecorded = check_testimonies(bag, entries, payload)
    check_items_csv(bag)
    check_claims(bag, payload)
    hidden = [seq for seq, entry in sorted(entries.items()) if withheld(entry)]
    note = ""
    if hidden:
        note = (
            f" ({len(hidden)} of them with details withheld, checked by their digest: "
            f"#{', #'.join(map(str, hidden))}; custody events bound by them, a binding the "
            f"package does not show: {unshown}"
            + (
                f"; statements whose recording entry may be one of them: {unrecorded}"
                if unrecorded
                else ""
            )
            + ")"
        )
    summary = (
        f"OK: {len(payload)} payload files, {items} custody chains, {len(entries)} audit "
        f"entries and their proofs hold{note}; the statements' files ({statements}) match "
        "testimonies.json and the audit entries that recorded them, items.csv matches "
        "items.json, each payload file belongs to one item or statement; signed by the key "
        f"with fingerprint {fingerprint(public)}"
    )
    last = sender if anchors.sender else not_checked(public)
    return "\n".join([summary, *said, last])


# -- cosigning, for a witness ------------------------------------------------------------

STATE = "witness-state.json"
HISTORY = "cosigned.jsonl"


def _name(name: str) -> str:
    if not name or re.search(r"[\s+]", name):
        raise Failure(f"--name {name!r}: a witness's name is one word, without spaces or '+'")
    return name


def _read_text(path: Path, what: str) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise Failure(f"{what} {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise Failure(f"{what} {path}: not a text file") from None


def _given_proof(path: Path, last: tuple[int, bytes], checkpoint: Checkpoint) -> list[dict]:
    """The proof in a file (``manage.py checkpoint_proof``'s JSON) as one of the
    checkpoint's own: ``{"size", "root", "proof"}``, once its ends are the right ones."""
    try:
        doc = json.loads(_read_text(path, "--proof"))
        start, end, proof = doc["from"], doc["to"], doc["proof"]
        ends = (start["size"], start["root"], end["size"], end["root"])
    except (ValueError, KeyError, TypeError):
        raise Failure(
            f"--proof {path}: not a consistency proof "
            '({"from": {"size", "root"}, "to": {"size", "root"}, "proof": [...]})'
        ) from None
    if ends[2:] != (checkpoint.size, checkpoint.root.hex()):
        raise Failure(f"--proof {path}: a proof to size {ends[2]}, not to this checkpoint")
    if ends[:2] != (last[0], last[1].hex()):
        raise Failure(
            f"--proof {path}: a proof from size {ends[0]} root {ends[1]}, not from the last "
            f"checkpoint this witness cosigned (size {last[0]}, root {last[1].hex()})"
        )
    return [{"size": start["size"], "root": start["root"], "proof": proof}]


class _Lock:
    """One cosigning at a time per state folder (where the OS offers ``fcntl``)."""

    def __init__(self, folder: Path) -> None:
        self.path = folder / ".lock"

    def __enter__(self) -> _Lock:
        self.fh = self.path.open("a")
        try:
            import fcntl
        except ImportError:  # not on this system: a witness runs one cosign at a time
            return self
        fcntl.flock(self.fh.fileno(), fcntl.LOCK_EX)
        return self

    def __exit__(self, *exc: object) -> None:
        self.fh.close()


def _write_state(folder: Path, state: dict) -> None:
    tmp = folder / f".{STATE}.{os.getpid()}"
    with tmp.open("w", encoding="utf-8") as fh:
        fh.write(json.dumps(state, indent=2, sort_keys=True) + "\n")
        fh.flush()
        os.fsync(fh.fileno())
    tmp.replace(folder / STATE)
    if hasattr(os, "O_DIRECTORY"):
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


Signer = Callable[[bytes, bytes], bytes]


def cosign(
    checkpoint_path: Path,
    *,
    key: Path,
    name: str,
    state: Path,
    log_keys: list[Path] | None = None,
    log_fingerprints: list[str] | None = None,
    proof: Path | None = None,
    now: int | None = None,
    sign: Signer = ed25519_sign,
) -> tuple[str, str]:
    """Cosign a checkpoint as the witness ``name`` whose private key is in ``key``, after
    checking it: signed by the log's key (``log_keys`` or ``log_fingerprints``), and an
    extension of the last checkpoint this witness cosigned (kept in ``state``), shown by a
    consistency proof the checkpoint carries or ``proof`` gives; never a step back, never
    a second root for one size. Records the new state, then returns the cosignature line
    and what was checked, in words."""
    name = _name(name)
    seed = private_key_from_pem(_read_text(key, "--key"))
    public = ed25519_public(seed)
    trusted = {normal_fingerprint(f) for f in log_fingerprints or []}
    for path in log_keys or []:
        try:
            trusted.add(fingerprint(public_key_from_pem(_read_text(path, "--log-key"))))
        except Failure:
            raise Failure(f"--log-key {path}: not an Ed25519 public key in PEM") from None
    if not trusted:
        raise Failure("give the log's key, as --log-key PEM or --log-fingerprint HEX")
    checkpoint = load_checkpoint(checkpoint_path)
    signer = fingerprint(checkpoint.public)
    if signer not in trusted:
        raise Failure(
            f"{checkpoint.where}: signed by the key with fingerprint {signer}, not by the "
            f"log's ({', '.join(sorted(trusted))})"
        )
    state.mkdir(parents=True, exist_ok=True)
    with _Lock(state):
        try:
            current = json.loads((state / STATE).read_text(encoding="utf-8"))
        except FileNotFoundError:
            current = {"format": "athar-witness-state/1", "logs": {}}
        except ValueError:
            raise Failure(f"{state / STATE}: not a witness's state (JSON)") from None
        witness = {"name": name, "key_fingerprint": fingerprint(public)}
        if current.setdefault("witness", witness) != witness:
            raise Failure(
                f"{state}: the state of witness {current['witness'].get('name')} (key "
                f"{current['witness'].get('key_fingerprint')}); each witness key keeps its "
                "own --state folder"
            )
        last = current["logs"].get(checkpoint.origin)
        checked = f"signed by the log's key {signer}"
        if last is None:
            checked += "; the first checkpoint of this log this witness cosigns"
        else:
            size, root = int(last["size"]), bytes.fromhex(last["root"])
            if checkpoint.size < size:
                raise Failure(
                    f"{checkpoint.where}: size {checkpoint.size} is older than size {size}, "
                    "which this witness cosigned: a witness never goes back"
                )
            if checkpoint.size == size and checkpoint.root != root:
                raise Failure(
                    f"{checkpoint.where}: root {checkpoint.root.hex()} for size {size}, for "
                    f"which this witness cosigned root {root.hex()}: the log shows two "
                    "histories; do not cosign, and tell the sender and the recipients"
                )
            if checkpoint.size > size:
                proofs = consistency_proofs(checkpoint.doc)
                if proof is not None:
                    proofs = [*_given_proof(proof, (size, root), checkpoint), *proofs]
                found = extends((size, root), checkpoint, proofs)
                if found is None:
                    raise Failure(
                        f"{checkpoint.where}: carries no consistency proof from size {size}, "
                        "the last checkpoint this witness cosigned; get one (manage.py "
                        "checkpoint_proof on the sender's side) and give it with --proof FILE"
                    )
                if not found:
                    raise Failure(
                        f"{checkpoint.where}: not consistent with size {size}, root "
                        f"{root.hex()}, which this witness cosigned: the log was rewritten"
                    )
            checked += f"; it extends size {size}, which this witness cosigned"
        when = int(time.time()) if now is None else now
        message = cosigned_message(when, checkpoint.text)
        signature = sign(seed, message)
        if not ed25519_verify(public, message, signature):
            raise Failure("the cosignature made does not verify: nothing recorded")
        line = cosignature_line(name, public, when, signature)
        record = {"size": checkpoint.size, "root": checkpoint.root.hex(), "time": when}
        current["logs"][checkpoint.origin] = {**record, "log_key": signer}
        _write_state(state, current)
        with (state / HISTORY).open("a", encoding="utf-8") as fh:
            fh.write(json.dumps({"origin": checkpoint.origin, **record, "line": line}) + "\n")
    return line, f"Cosigned {checkpoint.where} (size {checkpoint.size}): {checked}."


# -- the command line (verify.py, and manage.py verify_package / witness cosign) ----------


def _fingerprint_arg(text: str) -> str:
    try:
        return normal_fingerprint(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def add_verify_arguments(parser: argparse.ArgumentParser) -> None:
    """The anchors, as options; ``anchors_from`` reads them."""
    parser.add_argument(
        "--key-fingerprint",
        action="append",
        default=[],
        type=_fingerprint_arg,
        metavar="HEX",
        help="the SHA-256 fingerprint of a key the sender signs with, as they publish it "
        "(repeatable: any of them may match)",
    )
    parser.add_argument(
        "--trusted-key",
        action="append",
        default=[],
        type=Path,
        metavar="PEM",
        help="a public key the sender signs with, in PEM (repeatable)",
    )
    parser.add_argument(
        "--witness-key",
        action="append",
        default=[],
        type=Path,
        metavar="PEM",
        help="a witness's public key in PEM: it must have cosigned the package's "
        "checkpoint (repeatable)",
    )
    parser.add_argument(
        "--witnesses-required",
        type=int,
        metavar="N",
        help="how many of the witnesses given must have cosigned (default: all)",
    )
    parser.add_argument(
        "--previous-checkpoint",
        action="append",
        default=[],
        type=Path,
        metavar="PATH",
        help="a checkpoint you hold (an earlier package's folder, its "
        "metadata/audit/checkpoint.json, or a published checkpoint's folder or "
        "checkpoint.json): the package's must be consistent with it (repeatable)",
    )


def anchors_from(options: dict) -> Anchors:
    def key(path: Path, option: str) -> bytes:
        try:
            return public_key_from_pem(_read_text(path, option))
        except Failure as exc:
            if str(exc).startswith(option):
                raise
            raise Failure(f"{option} {path}: not an Ed25519 public key in PEM") from None

    witnesses = [key(p, "--witness-key") for p in options.get("witness_key") or []]
    required = options.get("witnesses_required")
    if required is not None and not 1 <= required <= len(witnesses):
        raise Failure(
            f"--witnesses-required {required}: between 1 and the number of --witness-key "
            f"given ({len(witnesses)})"
        )
    return Anchors(
        fingerprints=list(options.get("key_fingerprint") or []),
        keys=[key(p, "--trusted-key") for p in options.get("trusted_key") or []],
        witnesses=list(dict.fromkeys(witnesses)),
        witnesses_required=required,
        previous=list(options.get("previous_checkpoint") or []),
    )


def add_cosign_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "checkpoint",
        type=Path,
        help="a package's folder, a published checkpoint's folder, or a checkpoint.json",
    )
    parser.add_argument(
        "--key", type=Path, required=True, help="the witness's Ed25519 private key (PKCS#8 PEM)"
    )
    parser.add_argument(
        "--name", required=True, help="the witness's name, e.g. example.org/witness"
    )
    parser.add_argument(
        "--state",
        type=Path,
        required=True,
        help="the folder where the witness keeps the last checkpoint it cosigned",
    )
    parser.add_argument(
        "--log-key",
        action="append",
        default=[],
        type=Path,
        metavar="PEM",
        help="the log's public key (the sender's) in PEM",
    )
    parser.add_argument(
        "--log-fingerprint",
        action="append",
        default=[],
        type=_fingerprint_arg,
        metavar="HEX",
        help="the fingerprint of the log's key, as the sender publishes it",
    )
    parser.add_argument(
        "--proof",
        type=Path,
        help="a consistency proof from the last checkpoint cosigned to this one (JSON)",
    )


def cosign_from(options: dict, sign: Signer = ed25519_sign) -> tuple[str, str]:
    return cosign(
        options["checkpoint"],
        key=options["key"],
        name=options["name"],
        state=options["state"],
        log_keys=options.get("log_key") or [],
        log_fingerprints=options.get("log_fingerprint") or [],
        proof=options.get("proof"),
        sign=sign,
    )


def main(argv: list[str]) -> int:
    if argv[1:2] == ["cosign"]:
        parser = argparse.ArgumentParser(
            prog="verify.py cosign",
            description="Cosign a checkpoint as a witness (C2SP tlog-cosignature).",
        )
        add_cosign_arguments(parser)
        options = vars(parser.parse_args(argv[2:]))
        try:
            line, checked = cosign_from(options)
        except Failure as exc:
            print(f"REFUSED: {exc}", file=sys.stderr)
            return 1
        print(checked, file=sys.stderr)
        print(line)
        return 0
    parser = argparse.ArgumentParser(
        prog="verify.py",
        description="Check an Athar disclosure package offline. "
        "'verify.py cosign --help': cosign a checkpoint as a witness.",
    )
    parser.add_argument(
        "bag",
        nargs="?",
        type=Path,
        default=Path(__file__).resolve().parent,
        help="the package's folder (default: the one this file is in)",
    )
    add_verify_arguments(parser)
    options = vars(parser.parse_args(argv[1:]))
    try:
        print(verify(options["bag"], anchors_from(options)))
    except Failure as exc:
        print(f"FAILED: {exc}")
        return 1
    except (OSError, ValueError, KeyError, TypeError) as exc:
        print(f"FAILED: the bag could not be read: {exc!r}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
