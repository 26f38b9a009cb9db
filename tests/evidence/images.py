"""Small, deterministic test images (made here: tests never depend on shared samples)."""

import io
import random
import struct
import zlib
from pathlib import Path

from PIL import Image


def jpeg_bytes(
    seed: int = 0,
    size=(320, 240),
    make="Canon",
    model="EOS 40D",
    taken="2013:08:21 10:15:00",
    gps=((33, 30, 36), "N", (36, 17, 24), "E"),
    orientation=1,
    quality=90,
) -> bytes:
    rnd = random.Random(seed)
    img = Image.new("RGB", size)
    # Blocks of colour with noise: a texture a perceptual hash can tell apart by seed.
    for x0 in range(0, size[0], 40):
        for y0 in range(0, size[1], 40):
            img.paste(
                (rnd.randrange(256), rnd.randrange(256), rnd.randrange(256)),
                (x0, y0, x0 + 40, y0 + 40),
            )
    exif = Image.Exif()
    if make:
        exif[271] = make
        exif[272] = model
    exif[274] = orientation
    if taken:
        exif.get_ifd(0x8769)[36867] = taken
    if gps:
        g = exif.get_ifd(0x8825)
        g[1], g[2], g[3], g[4] = (
            gps[1],
            tuple(float(v) for v in gps[0]),
            gps[3],
            tuple(float(v) for v in gps[2]),
        )
    out = io.BytesIO()
    img.save(out, "JPEG", quality=quality, exif=exif)
    return out.getvalue()


def write(path: Path, data: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def png_bomb(width=20000, height=20000) -> bytes:
    """A PNG of a few dozen bytes whose header claims width x height pixels."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data))
            + kind
            + data
            + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
        )

    ihdr = struct.pack(">IIBBBBB", width, height, 1, 0, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", ihdr)
        + chunk(b"IDAT", zlib.compress(b"\x00" * 64))
        + chunk(b"IEND", b"")
    )
