"""The forger of issue 30: with Python's standard library and the ``openssl`` command
alone (no Athar), replace a photo of a disclosure package and make the package pass every
check it prescribes, signed with a key of the forger's own.

    python3 -I forger.py BAG PHOTO WORKDIR [--drop-cosignatures] [--drop-proofs]

It replaces the bag's first original with PHOTO, then recomputes what depends on it: the
row of items.json and items.csv, the item's custody events and their content hashes, the
audit entries that bind them (and each hash after them in the excerpt), a checkpoint of the
same size over a Merkle tree of its own making, every inclusion proof, the manifests,
Payload-Oxum and the tag manifests; it signs the checkpoint and tagmanifest-sha256.txt
with a key it makes (``openssl genpkey``, ``openssl pkeyutl -sign -rawin``) and puts that
key in the bag, and its fingerprint in VERIFY.txt. Whatever else the checkpoint carries
(consistency proofs, cosignatures) it leaves as it found it, or drops.
"""

import base64
import csv
import hashlib
import io
import json
import subprocess
import sys
from pathlib import Path

HASHED = (
    "seq",
    "at",
    "actor_id",
    "actor_label",
    "action",
    "target_type",
    "target_id",
    "target_label",
    "case_id",
    "ip",
    "user_agent",
)
FORMULA = ("=", "+", "-", "@", "\t", "\r")


def canonical(doc):
    return json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def sha(data, algorithm="sha256"):
    return hashlib.new(algorithm, data).hexdigest()


def openssl(*args, data=None):
    return subprocess.run(["openssl", *args], input=data, capture_output=True, check=True).stdout


def entry_hash(entry):
    doc = {name: entry[name] for name in HASHED}
    doc["details_sha256"] = entry.get("details_sha256") or sha(canonical(entry["details"]))
    return sha(entry["prev_hash"].encode() + canonical(doc))


def leaf(data):
    return hashlib.sha256(b"\x00" + data).digest()


def node(left, right):
    return hashlib.sha256(b"\x01" + left + right).digest()


def mth(leaves, lo, hi):
    if hi - lo == 1:
        return leaf(leaves[lo])
    k = 1 << ((hi - lo - 1).bit_length() - 1)
    return node(mth(leaves, lo, lo + k), mth(leaves, lo + k, hi))


def path(leaves, index, lo, hi):
    if hi - lo == 1:
        return []
    k = 1 << ((hi - lo - 1).bit_length() - 1)
    if index < lo + k:
        return [*path(leaves, index, lo, lo + k), mth(leaves, lo + k, hi)]
    return [*path(leaves, index, lo + k, hi), mth(leaves, lo, lo + k)]


def cell(value):
    if isinstance(value, dict | list):
        value = json.dumps(value, ensure_ascii=False, sort_keys=True)
    text = "" if value is None else str(value)
    return "'" + text if text.startswith(FORMULA) else text


def dump(path_, doc):
    path_.write_text(json.dumps(doc, ensure_ascii=False, sort_keys=True, indent=2) + "\n")


def forge(bag, photo, work, flags=()):
    # 1. The photo.
    victim = sorted((bag / "data/originals").iterdir())[0]
    new = photo.read_bytes()
    victim.write_bytes(new)
    items = json.loads((bag / "metadata/items.json").read_text())
    row = next(r for r in items if r["file"] == victim.name)
    old = row["sha256"]
    row.update(sha256=sha(new), sha512=sha(new, "sha512"), size=len(new))
    items = json.loads(json.dumps(items).replace(old, row["sha256"]))  # reviews name it too
    row = next(r for r in items if r["file"] == victim.name)
    dump(bag / "metadata/items.json", items)
    header = next(csv.reader(io.StringIO((bag / "metadata/items.csv").read_text(), newline="")))
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(header)
    for r in items:
        writer.writerow([cell(r[name]) for name in header])
    (bag / "metadata/items.csv").write_bytes(out.getvalue().encode())
    # 2. Its custody events: the hash they verified, their content hashes.
    custody = bag / f"metadata/custody/{row['export_id']}.json"
    chain = json.loads(custody.read_text())
    chain["sha256"] = row["sha256"]
    renamed = {old: row["sha256"]}
    for event in chain["events"]:
        if event["columns"].get("sha256") == old:
            event["columns"]["sha256"] = row["sha256"]
        before, event["row_hash"] = event["row_hash"], sha(canonical(event["columns"]))
        renamed[before] = event["row_hash"]
    dump(custody, chain)
    # 3. The audit entries that name them, and every hash after them.
    lines = (bag / "metadata/audit/entries.jsonl").read_text().splitlines()
    entries = [json.loads(line) for line in lines]
    hashes = {}
    for entry in entries:
        if "details_sha256" not in entry:
            text = json.dumps(entry["details"], ensure_ascii=False)
            for was, now in renamed.items():
                text = text.replace(was, now)
            entry["details"] = json.loads(text)
        if entry["seq"] - 1 in hashes:
            entry["prev_hash"] = hashes[entry["seq"] - 1]
        entry["hash"] = hashes[entry["seq"]] = entry_hash(entry)
    (bag / "metadata/audit/entries.jsonl").write_text(
        "".join(json.dumps(e, ensure_ascii=False, sort_keys=True) + "\n" for e in entries)
    )
    # 4. A tree of the checkpoint's size: the excerpt's entries where they belong, made-up
    # leaves elsewhere; a checkpoint over it and every proof.
    checkpoint_file = bag / "metadata/audit/checkpoint.json"
    checkpoint = json.loads(checkpoint_file.read_text())
    origin, size, _root = checkpoint["signed_text"].split("\n")[:3]
    size = int(size)
    leaves = [hashlib.sha256(b"made up %d" % i).digest() for i in range(size)]
    for seq, value in hashes.items():
        leaves[seq - 1] = bytes.fromhex(value)
    root = mth(leaves, 0, size)
    proofs = {
        str(seq): {
            "index": seq - 1,
            "size": size,
            "proof": [p.hex() for p in path(leaves, seq - 1, 0, size)],
        }
        for seq in hashes
    }
    dump(bag / "metadata/audit/proofs.json", proofs)
    key = work / "forger.pem"
    openssl("genpkey", "-algorithm", "ed25519", "-out", str(key))
    pem = openssl("pkey", "-in", str(key), "-pubout").decode()
    text = f"{origin}\n{size}\n{root.hex()}\n"
    (work / "checkpoint.txt").write_text(text)
    signature = openssl(
        "pkeyutl", "-sign", "-rawin", "-inkey", str(key), "-in", str(work / "checkpoint.txt")
    )
    checkpoint.update(
        root=root.hex(),
        signed_text=text,
        signature=base64.b64encode(signature).decode(),
        public_key=pem,
        timestamp_reply=None,
    )
    if "--drop-cosignatures" in flags:
        checkpoint["cosignatures"] = []
    if "--drop-proofs" in flags:
        checkpoint["consistency_proofs"], checkpoint["consistency_from_previous"] = [], None
    dump(checkpoint_file, checkpoint)
    # 5. The key, its fingerprint, the manifests, the signature.
    old_pem = (bag / "public-key.pem").read_text()
    old_fp = sha(openssl("pkey", "-pubin", "-outform", "DER", data=old_pem.encode()))
    new_fp = sha(openssl("pkey", "-pubin", "-outform", "DER", data=pem.encode()))
    (bag / "public-key.pem").write_text(pem)
    verify_txt = bag / "VERIFY.txt"
    verify_txt.write_text(verify_txt.read_text().replace(old_fp, new_fp))
    payload = sorted(
        p.relative_to(bag).as_posix() for p in (bag / "data").rglob("*") if p.is_file()
    )
    for algorithm in ("sha256", "sha512"):
        listed = "".join(f"{sha((bag / f).read_bytes(), algorithm)}  {f}\n" for f in payload)
        (bag / f"manifest-{algorithm}.txt").write_text(listed)
    oxum = f"{sum((bag / f).stat().st_size for f in payload)}.{len(payload)}"
    info = (bag / "bag-info.txt").read_text().splitlines()
    info = [f"Payload-Oxum: {oxum}" if line.startswith("Payload-Oxum:") else line for line in info]
    (bag / "bag-info.txt").write_text("\n".join(info) + "\n")
    tags = sorted(
        p.relative_to(bag).as_posix()
        for p in bag.rglob("*")
        if p.is_file()
        and not p.relative_to(bag).as_posix().startswith(("data/", "signature/"))
        and not p.name.startswith("tagmanifest-")
    )
    for algorithm in ("sha256", "sha512"):
        listed = "".join(f"{sha((bag / t).read_bytes(), algorithm)}  {t}\n" for t in tags)
        (bag / f"tagmanifest-{algorithm}.txt").write_text(listed)
    signed = bag / "signature/tagmanifest-sha256.txt.sig"
    signed.write_bytes(
        openssl(
            "pkeyutl",
            "-sign",
            "-rawin",
            "-inkey",
            str(key),
            "-in",
            str(bag / "tagmanifest-sha256.txt"),
        )
    )
    return new_fp


if __name__ == "__main__":
    bag, photo, work = (Path(a) for a in sys.argv[1:4])
    print(forge(bag, photo, work, sys.argv[4:]))
