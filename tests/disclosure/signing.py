"""The sender's side, for tests that change a built bag on purpose: its manifests,
Payload-Oxum and tag manifests written again and signed with the genuine key (the one the
build signs with), as the build would have, had it written the bag that way."""

import hashlib
import json
from pathlib import Path

from casefiles import checkpoints

CHECKPOINT = "metadata/audit/checkpoint.json"


def _sha(path: Path, algorithm: str) -> str:
    return hashlib.new(algorithm, path.read_bytes()).hexdigest()


def resign(bag: Path) -> None:
    payload = sorted(
        p.relative_to(bag).as_posix() for p in (bag / "data").rglob("*") if p.is_file()
    )
    for algorithm in ("sha256", "sha512"):
        lines = "".join(f"{_sha(bag / f, algorithm)}  {f}\n" for f in payload)
        (bag / f"manifest-{algorithm}.txt").write_text(lines)
    oxum = f"{sum((bag / f).stat().st_size for f in payload)}.{len(payload)}"
    info = [
        f"Payload-Oxum: {oxum}" if line.startswith("Payload-Oxum:") else line
        for line in (bag / "bag-info.txt").read_text().splitlines()
    ]
    (bag / "bag-info.txt").write_text("\n".join(info) + "\n")
    tags = sorted(
        p.relative_to(bag).as_posix()
        for p in bag.rglob("*")
        if p.is_file()
        and not p.relative_to(bag).as_posix().startswith(("data/", "signature/"))
        and not p.name.startswith("tagmanifest-")
    )
    for algorithm in ("sha256", "sha512"):
        lines = "".join(f"{_sha(bag / t, algorithm)}  {t}\n" for t in tags)
        (bag / f"tagmanifest-{algorithm}.txt").write_text(lines)
    signature = checkpoints.signing_key().sign((bag / "tagmanifest-sha256.txt").read_bytes())
    (bag / "signature/tagmanifest-sha256.txt.sig").write_bytes(signature)


def checkpoint_of(bag: Path) -> dict:
    return json.loads((bag / CHECKPOINT).read_text())


def change_checkpoint(bag: Path, change) -> None:
    """Change the package's checkpoint.json (what its signed text does not cover: its
    consistency proofs, its cosignatures) and sign the bag again."""
    doc = checkpoint_of(bag)
    change(doc)
    (bag / CHECKPOINT).write_text(json.dumps(doc, indent=2, sort_keys=True) + "\n")
    resign(bag)


def carry_proof_from(bag: Path, held: dict) -> None:
    """The package's checkpoint carries a consistency proof from the checkpoint ``held``
    (as the build writes them into ``consistency_proofs``); added when it does not yet."""
    doc = checkpoint_of(bag)
    if any(p.get("size") == held["size"] for p in doc.get("consistency_proofs") or []):
        return
    proof = checkpoints.consistency_proof(checkpoints.stored_leaves(), held["size"], doc["size"])
    found = {"size": held["size"], "root": held["root"], "proof": [p.hex() for p in proof]}

    def add(doc: dict) -> None:
        doc["consistency_proofs"] = [*(doc.get("consistency_proofs") or []), found]

    change_checkpoint(bag, add)
