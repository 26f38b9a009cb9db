"""Fictional demo photos for the demo case (after `seed_demo`). Idempotent; never in
production. The pictures are generated here: coloured blocks with camera-like EXIF.

It also leaves a second fictional USB stick, not yet taken in, with its custodian's
checksum list, under ``$ATHAR_DATA_DIR/demo/`` (``var/demo/`` by default), so that the
README's intake example runs as written."""

import hashlib
import io
import random
import tempfile
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from PIL import Image

from casefiles.models import Case
from evidence.intake.pipeline import ingest_path
from evidence.models import EvidenceItem

CASE = "DEMO-2014-001"


def demo_photo(n: int) -> bytes:
    rnd = random.Random(n // 2)  # pairs of near-identical frames  # noqa: S311
    img = Image.new("RGB", (800, 600))
    for x in range(0, 800, 100):
        for y in range(0, 600, 100):
            img.paste(
                (rnd.randrange(256), rnd.randrange(256), rnd.randrange(256)),
                (x, y, x + 100, y + 100),
            )
    exif = Image.Exif()
    exif[271], exif[272], exif[274] = "Canon", "EOS 40D", 1
    exif.get_ifd(0x8769)[36867] = f"2013:08:{10 + n // 4:02d} 1{n % 10}:00:00"
    out = io.BytesIO()
    img.save(out, "JPEG", quality=85 if n % 2 else 70, exif=exif)
    return out.getvalue()


def write_demo_medium(folder: Path) -> None:
    """A second stick: six more photos and the custodian's ``sha256sum`` list of them
    (``<folder>.sha256``, beside the folder: it is not on the stick)."""
    if folder.is_dir() and folder.with_suffix(".sha256").is_file():
        return
    lines = []
    for n in range(12, 18):
        name = f"DCIM/102CANON/IMG_{n:04d}.JPG"
        data = demo_photo(n)
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        lines.append(f"{hashlib.sha256(data).hexdigest()}  {name}\n")
    folder.with_suffix(".sha256").write_text("".join(lines))


class Command(BaseCommand):
    help = "Take a dozen fictional photos into the demo case (never in production)."

    def handle(self, *args, **options):
        if settings.PRODUCTION:
            raise CommandError("Demo data is never loaded in production (ATHAR_ENV=production).")
        case = Case.objects.filter(reference=CASE).first()
        if case is None:
            raise CommandError("Run `manage.py seed_demo` first.")
        medium = settings.DATA_DIR / "demo" / "usb-stick"
        write_demo_medium(medium)
        if EvidenceItem.objects.filter(case=case).exists():
            self.stdout.write("demo evidence present")
            return
        actor = get_user_model().objects.get(username="investigator")
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp) / "DCIM"
            for n in range(12):
                path = root / f"{100 + n // 6}CANON" / f"IMG_{n:04d}.JPG"
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(demo_photo(n))
            (root / "README.txt").write_text("Fictional demo material — مادة تجريبية وهمية\n")
            report = ingest_path(
                actor=actor,
                case=case,
                path=root,
                jobs=1,
                acquired_from="S-0001 (fictional source)",
                medium="USB stick (demo)",
            )
        self.stdout.write(f"demo evidence: {report.new_items} items taken in")
