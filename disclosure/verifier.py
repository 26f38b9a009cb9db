#!/usr/bin/env python3
"""Check an Athar disclosure package offline, with Python's standard library alone.

    python3 verify.py [BAG-DIRECTORY]      (default: the bag this file is in)

Exit 0 when everything holds; 1, naming the first failure, otherwise. It checks:

1. the bag (RFC 8493, the Athar disclosure profile): bagit.txt, bag-info.txt with its
   required fields and Payload-Oxum, no fetch.txt, every payload file listed in the
   SHA-256 and SHA-512 manifests and no other, every digest of the manifests and of the
   tag manifests;
2. the Ed25519 signature (RFC 8032) over tagmanifest-sha256.txt (signature/ holds it and
   nothing else), with the public key in public-key.pem (compare its fingerprint, the
   SHA-256 of its DER form, with the one the sender publishes);
3. the audit checkpoint: signed by the same key, and each audit entry of the package, in
   order of its seq: its hash recomputed from its content (from ``details_sha256``, the
   digest its hash covers, where its details are withheld because they name what the
   package withholds of an item sent as a redacted copy), and its Merkle inclusion proof
   (RFC 9162) against the checkpoint's root;
4. each item's custody chain: each event's content hash recomputed and bound by one of
   those audit entries, each hash the chain verified equal to the file's SHA-256. An
   event bound by an entry whose details are withheld is counted and named in the
   result: the binding is in the details, which the package does not give.

This file is the same code as Athar's ``manage.py verify_package``; it imports nothing
from Athar and reads nothing but the bag.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import sys
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
COVERED = ("verify.py", "VERIFY.txt", PUBLIC_KEY)
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


class Failure(Exception):
    """The first thing that does not hold, in words."""


# -- Ed25519 verification (RFC 8032 §5.1.7), for the signature ------------------------

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


_SPKI_PREFIX = bytes.fromhex("302a300506032b6570032100")


def fingerprint(public: bytes) -> str:
    """The key's fingerprint: SHA-256 of its DER SubjectPublicKeyInfo, what
    ``openssl pkey -pubin -in public-key.pem -outform DER | sha256sum`` prints."""
    return hashlib.sha256(_SPKI_PREFIX + public).hexdigest()


def public_key_from_pem(text: str) -> bytes:
    """The 32 bytes of an Ed25519 public key in PEM (SubjectPublicKeyInfo)."""
    body = re.sub(r"-----[A-Z ]+-----|\s", "", text)
    der = base64.b64decode(body, validate=True)
    if len(der) != 44 or not der.startswith(_SPKI_PREFIX):
        raise Failure("the public key is not an Ed25519 key in PEM")
    return der[len(_SPKI_PREFIX) :]


# -- Merkle inclusion (RFC 9162 §2.1.3.2) and the audit entries' hashes ----------------


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


def check_audit(bag: Path, public: bytes) -> dict[int, dict]:
    """The checkpoint's signature, each entry's hash and its inclusion proof."""
    checkpoint = _json(bag, "metadata/audit/checkpoint.json")
    if not isinstance(checkpoint, dict):
        raise Failure("metadata/audit/checkpoint.json is not a checkpoint")
    text = str(checkpoint.get("signed_text", ""))
    if public_key_from_pem(str(checkpoint.get("public_key", ""))) != public:
        raise Failure("metadata/audit/checkpoint.json: signed by another key than the package")
    signature = base64.b64decode(str(checkpoint.get("signature", "")))
    if not ed25519_verify(public, text.encode(), signature):
        raise Failure("metadata/audit/checkpoint.json: the checkpoint's signature does not verify")
    lines = text.split("\n")
    if len(lines) != 4 or not lines[1].isdigit() or not re.fullmatch(r"[0-9a-f]{64}", lines[2]):
        raise Failure("metadata/audit/checkpoint.json: the signed text is not a checkpoint")
    size, root = int(lines[1]), bytes.fromhex(lines[2])
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
        proof = proofs.get(str(seq))
        if not isinstance(proof, dict):
            raise Failure(f"audit entry #{seq}: no inclusion proof")
        path_hashes = [bytes.fromhex(p) for p in proof.get("proof", [])]
        if proof.get("size") != size or not verify_inclusion(
            bytes.fromhex(entry["hash"]), int(proof.get("index", -1)), size, path_hashes, root
        ):
            raise Failure(f"audit entry #{seq}: its inclusion proof does not verify")
    return entries


def check_custody(bag: Path, entries: dict[int, dict], payload: dict) -> tuple[int, int]:
    """Each item's custody chain, bound by the audit entries; returns the items checked
    and the events bound by an entry whose details (the binding) are withheld."""
    unshown = 0
    items = _json(bag, "metadata/items.json")
    if not isinstance(items, list):
        raise Failure("metadata/items.json is not a list of items")
    for item in items:
        export_id, sha256 = item["export_id"], item["sha256"]
        redaction = item.get("redaction")
        if isinstance(redaction, dict):  # a redacted copy went instead of the original
            file, expected = f"data/{item['payload']}", redaction["sha256"]
            if not file.startswith("data/redacted/") or redaction["original_sha256"] != sha256:
                raise Failure(f"metadata/items.json: {export_id}'s redacted copy is misnamed")
        else:
            file, expected = f"data/originals/{item['file']}", sha256
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


def verify(bag: Path, *, payload_digests: dict[str, dict] | None = None) -> str:
    """Everything above, in order; raises ``Failure`` at the first thing that fails.
    ``payload_digests``: see ``check_bag`` (a build's self-check)."""
    if not bag.is_dir():
        raise Failure(f"{bag} is not a directory")
    payload = check_bag(bag, payload_digests)
    public = check_signature(bag)
    entries = check_audit(bag, public)
    items, unshown = check_custody(bag, entries, payload)
    hidden = [seq for seq, entry in sorted(entries.items()) if withheld(entry)]
    note = ""
    if hidden:
        note = (
            f" ({len(hidden)} of them with details withheld, checked by their digest: "
            f"#{', #'.join(map(str, hidden))}; custody events bound by them, a binding the "
            f"package does not show: {unshown})"
        )
    return (
        f"OK: {len(payload)} payload files, {items} custody chains, {len(entries)} audit "
        f"entries and their proofs hold{note}; signed by the key with fingerprint "
        f"{fingerprint(public)}"
    )


def main(argv: list[str]) -> int:
    bag = Path(argv[1]) if len(argv) > 1 else Path(__file__).resolve().parent
    try:
        print(verify(bag))
    except Failure as exc:
        print(f"FAILED: {exc}")
        return 1
    except (OSError, ValueError, KeyError, TypeError) as exc:
        print(f"FAILED: the bag could not be read: {exc!r}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
