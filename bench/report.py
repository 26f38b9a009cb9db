"""The custody report's render time per item, on synthetic bags (no database).

    .venv/bin/python bench/report.py [--items 200 2000] [--no-thumbnails]

Each bag holds what ``disclosure.report.render_from_bag`` reads: bag-info.txt,
manifest-sha256.txt, metadata/package.json, items.json, testimonies.json, one custody
file per item (three events: acquired, copied, stored), and a 256 px JPEG thumbnail per
item (about 10 KB, of noise, as a photo's would be). Prints, per size, the seconds and
ms per item, and the PDF's size and pages; a render of the bag twice must give the same
bytes.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import random
import re
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "athar.settings")
os.environ.setdefault("DATABASE_URL", "sqlite:///:memory:")

import django

django.setup()

from disclosure import report  # noqa: E402


def _thumb(rng: random.Random) -> bytes:
    from PIL import Image

    img = Image.frombytes("RGB", (256, 192), rng.randbytes(256 * 192 * 3))
    img = img.resize((64, 48)).resize((256, 192))  # blotches, not pure noise: a photo's size
    out = io.BytesIO()
    img.save(out, "JPEG", quality=80)
    return out.getvalue()


def make_bag(root: Path, n: int, thumbnails: bool) -> None:
    rng = random.Random(n)
    code = "PKG-0042"
    (root / "metadata" / "custody").mkdir(parents=True)
    (root / "metadata" / "thumbnails").mkdir()
    rows, manifest = [], []
    for i in range(1, n + 1):
        export_id = f"{code}-{i:04d}"
        sha = hashlib.sha256(f"{i}".encode()).hexdigest()
        at = f"2026-11-{1 + i % 28:02d}T{i % 24:02d}:{i % 60:02d}:07.548306+00:00"
        rows.append(
            {
                "acquired_from": "W-0001",
                "acquisition_method": "copied from the medium",
                "camera": "Canon EOS 40D",
                "date_taken": "2013:08:21 10:15:00",
                "export_id": export_id,
                "file": f"{export_id}.jpg",
                "gps_latitude": "33.5100000",
                "gps_longitude": "36.2900000",
                "graphic": i % 17 == 0,
                "intake_date": at,
                "kind": "photo",
                "legal_links": [],
                "media_type": "image/jpeg",
                "medium": "USB stick, SanDisk 32 GB",
                "original_filename": f"IMG_{i:05d}.jpg",
                "original_path": f"DCIM/100CANON/IMG_{i:05d}.jpg",
                "payload": f"originals/{export_id}.jpg",
                "redaction": "none: the original, whole",
                "reference": f"EV-{i:06d}",
                "review_status": "approved",
                "reviewers": [
                    {"at": at, "by": "lawyer", "comment": "", "from": "draft", "to": "submitted"},
                    {"at": at, "by": "lead", "comment": "", "from": "submitted", "to": "approved"},
                ],
                "sensitivity": "confidential",
                "sha256": sha,
                "sha512": "",
                "size": 750_000 + i,
                "source": {"code": "W-0001"},
                "title": f"IMG_{i:05d}.jpg",
            }
        )
        events = [
            {
                "columns": {
                    "action": action,
                    "at": at,
                    "from_custodian": src,
                    "to_custodian": dst,
                    "hash_result": "match",
                    "purpose": purpose,
                    "sha256": sha,
                    "id": 3 * i + k,
                    "item_id": i,
                },
                "row_hash": "0" * 64,
                "bound_by": 1,
            }
            for k, (action, src, dst, purpose) in enumerate(
                [
                    ("acquired", "W-0001", "investigator", "intake"),
                    ("copied", "investigator", "athar/audit", "working copy"),
                    ("stored", "athar/audit", "evidence store", "storage"),
                ]
            )
        ]
        doc = {"export_id": export_id, "reference": f"EV-{i:06d}", "events": events, "sha256": sha}
        (root / "metadata" / "custody" / f"{export_id}.json").write_text(json.dumps(doc))
        if thumbnails and i % 17:
            (root / "metadata" / "thumbnails" / f"{export_id}.jpg").write_bytes(_thumb(rng))
        manifest.append(f"{sha}  data/originals/{export_id}.jpg\n")
    (root / "metadata" / "items.json").write_text(json.dumps(rows))
    (root / "metadata" / "testimonies.json").write_text("[]")
    package = {
        "package": code,
        "case": "SYR-2014-001",
        "recipient": "A war-crimes unit (fictional)",
        "recipient_reference": "",
        "purpose": "prosecution",
        "requested_by": "lawyer",
        "requested_at": "2026-12-07T12:40:08.363833+00:00",
        "approved_by": "lead",
        "approved_at": "2026-12-07T12:40:08.372964+00:00",
        "left_out": {},
    }
    (root / "metadata" / "package.json").write_text(json.dumps(package))
    (root / "manifest-sha256.txt").write_text("".join(manifest))
    (root / "bag-info.txt").write_text(
        f"External-Identifier: {code}\nBagging-Date: 2026-12-07\nPurpose: prosecution\n"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--items", type=int, nargs="+", default=[200, 2000])
    parser.add_argument("--no-thumbnails", action="store_true")
    args = parser.parse_args()
    report.render_from_bag  # noqa: B018
    with tempfile.TemporaryDirectory() as tmp:
        warm = Path(tmp) / "warm"
        make_bag(warm, 2, not args.no_thumbnails)
        report.render_from_bag(warm)  # fonts loaded once, as in a worker that has run before
        for n in args.items:
            root = Path(tmp) / f"bag{n}"
            make_bag(root, n, not args.no_thumbnails)
            t, cpu = time.perf_counter(), time.process_time()
            pdf = report.render_from_bag(root)
            took, cpu = time.perf_counter() - t, time.process_time() - cpu
            pages = len(re.findall(rb"/Type\s*/Page\b", pdf))
            print(
                f"{n} items: {took:.2f} s ({1000 * took / n:.1f} ms per item), CPU {cpu:.2f} s "
                f"({1000 * cpu / n:.1f} ms per item), {len(pdf) / 1e6:.1f} MB, {pages} pages"
            )
            if n <= 200:
                assert report.render_from_bag(root) == pdf, "two renders differ"


if __name__ == "__main__":
    main()
