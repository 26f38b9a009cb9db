"""Fictional demo photographs, drawn at seed time (nothing is read from disk or the net).

Each is a picture of coloured blocks with a white card bearing a made-up number, and the
EXIF a camera would write: make, model, the date it was taken and, for the camera card,
a GPS position. Frames drawn from the same seed differ only in their JPEG quality: they
are near-identical, so intake puts them in one near-duplicate group.
"""

from __future__ import annotations

import hashlib
import io
import random
from datetime import UTC, datetime, timedelta
from pathlib import Path

from PIL import Image, ImageDraw
from PIL.TiffImagePlugin import IFDRational

EXIF_IFD, GPS_IFD = 0x8769, 0x8825
MAKE, MODEL, ORIENTATION, DATETIME, DATETIME_ORIGINAL = 271, 272, 274, 306, 36867

# The camera card of the demo batch: how many photos, and which of them are near-identical
# frames (two or three shots of one scene: the first PAIRS scenes have two frames each).
CARD_PHOTOS = 60
PAIRS = 12
FIRST_SHOT = datetime(2013, 8, 10, 9, 0, tzinfo=UTC)  # EXIF writes no zone: the camera's clock
# A made-up position in open country, moved a little for each scene.
ORIGIN = (33.4861, 36.2107)


def _scene(seed: int, card: str) -> Image.Image:
    rnd = random.Random(seed)  # noqa: S311 (a picture, not a secret)
    img = Image.new("RGB", (800, 600))
    for x in range(0, 800, 100):
        for y in range(0, 600, 100):
            colour = (rnd.randrange(256), rnd.randrange(256), rnd.randrange(256))
            img.paste(colour, (x, y, x + 100, y + 100))
    if card:
        draw = ImageDraw.Draw(img)
        draw.rectangle((20, 520, 260, 580), fill=(250, 250, 245))
        draw.text((32, 540), card, fill=(20, 20, 20))
    return img


def _rational_dms(value: float) -> tuple[IFDRational, IFDRational, IFDRational]:
    degrees = int(value)
    minutes = int((value - degrees) * 60)
    seconds = round(((value - degrees) * 60 - minutes) * 60, 2)
    return IFDRational(degrees, 1), IFDRational(minutes, 1), IFDRational(int(seconds * 100), 100)


def _jpeg(
    img: Image.Image,
    *,
    make: str,
    model: str,
    taken: datetime,
    quality: int,
    gps: tuple[float, float] | None = None,
) -> bytes:
    exif = Image.Exif()
    exif[MAKE], exif[MODEL], exif[ORIENTATION] = make, model, 1
    stamp = taken.strftime("%Y:%m:%d %H:%M:%S")
    exif[DATETIME] = stamp
    exif.get_ifd(EXIF_IFD)[DATETIME_ORIGINAL] = stamp
    if gps is not None:
        lat, lon = gps
        position = exif.get_ifd(GPS_IFD)
        position[1], position[2] = ("N" if lat >= 0 else "S"), _rational_dms(abs(lat))
        position[3], position[4] = ("E" if lon >= 0 else "W"), _rational_dms(abs(lon))
    out = io.BytesIO()
    img.save(out, "JPEG", quality=quality, exif=exif)
    return out.getvalue()


def demo_photo(n: int) -> bytes:
    """Photo ``n`` of the demo USB stick (and of tests that need one realistic JPEG):
    photos 2k and 2k+1 are near-identical frames. No GPS: that camera had none."""
    taken = datetime(2013, 8, 10 + n // 4, 10 + n % 10, 0, tzinfo=UTC)
    img = _scene(n // 2, "")
    return _jpeg(img, make="Canon", model="EOS 40D", taken=taken, quality=85 if n % 2 else 70)


def card_scene(n: int) -> int:
    """The scene photo ``n`` of the camera card shows: frames 2k and 2k+1 share a scene
    for k < PAIRS; every later photo is a scene of its own."""
    return n // 2 if n < 2 * PAIRS else n - PAIRS


def card_photo(n: int) -> bytes:
    """Photo ``n`` (0 to CARD_PHOTOS - 1) of the camera card: a numbered card in the
    picture, the date and time it was taken, and where (GPS)."""
    scene = card_scene(n)
    taken = FIRST_SHOT + timedelta(days=scene // 6, minutes=7 * n)
    gps = (ORIGIN[0] + 0.0007 * (scene % 5), ORIGIN[1] + 0.0009 * (scene % 7))
    img = _scene(1000 + scene, f"DEMO {scene + 1:03d}/0813")
    return _jpeg(
        img,
        make="NIKON CORPORATION",
        model="NIKON D90",
        taken=taken,
        quality=88 if n % 2 else 72,
        gps=gps,
    )


def card_name(n: int) -> str:
    return f"DCIM/100NCD90/DSC_{n + 1:04d}.JPG"


def _write_with_list(folder: Path, files: dict[str, bytes]) -> Path:
    """Write ``files`` under ``folder`` and the custodian's ``sha256sum`` list of them
    beside it (``<folder>.sha256``: the list is not on the medium). Returns the list."""
    listing = folder.with_suffix(".sha256")
    lines = []
    for name, data in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.is_file() or path.read_bytes() != data:
            path.write_bytes(data)
        lines.append(f"{hashlib.sha256(data).hexdigest()}  {name}\n")
    text = "".join(lines)
    if not listing.is_file() or listing.read_text() != text:
        listing.write_text(text)
    return listing


def write_camera_card(folder: Path) -> Path:
    """The demo batch's medium: CARD_PHOTOS photos and a note. Returns the custodian's list.
    The bytes are the same at every run, so a second run finds the batch it took in."""
    files = {card_name(n): card_photo(n) for n in range(CARD_PHOTOS)}
    files["README.txt"] = "Fictional demo material — مادة تجريبية وهمية\n".encode()
    return _write_with_list(folder, files)


def write_demo_medium(folder: Path) -> Path:
    """A second stick, not taken in by the seed: six photos and the custodian's list, so
    that the README's intake example runs as written."""
    files = {f"DCIM/102CANON/IMG_{n:04d}.JPG": demo_photo(n) for n in range(12, 18)}
    return _write_with_list(folder, files)
