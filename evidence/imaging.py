"""Pictures: a reduced decode (Pillow ``draft``), thumbnails and previews, the perceptual
hash and EXIF. Shared by intake (worker processes) and derivatives made later from the
verified original; no Django and no database here.
"""

from __future__ import annotations

import io
import math
import warnings
from datetime import datetime
from typing import IO, Any, NamedTuple

import PIL
from PIL import Image, ImageFilter

from .intake.payload import IntakeResult, Thumbnail
from .originals import WriteOnceStore, derivative_key

MAX_PIXELS = 90_000_000  # more is refused before decoding (a decompression bomb)
THUMBNAIL_SIZE = 256
THUMBNAIL_QUALITY = 80
PREVIEW_SIZE = 1024
# How a thumbnail is made, recorded with each one (and followed when one is made again).
THUMBNAIL_PARAMETERS = {
    "max": THUMBNAIL_SIZE,
    "quality": THUMBNAIL_QUALITY,
    "resample": "box",
    "exif_transpose": True,
}
Image.MAX_IMAGE_PIXELS = MAX_PIXELS  # Pillow refuses twice this outright, warns above it
DECODABLE = {"image/jpeg", "image/png", "image/gif", "image/tiff", "image/bmp", "image/webp"}
# Pillow plugins for those, and only those (never one that hands off to another program).
PIL_FORMATS = [media_type.split("/")[1].upper() for media_type in sorted(DECODABLE)]
TOOL = f"Pillow {PIL.__version__}"


# -- metadata ------------------------------------------------------------------------
def _plain(value: Any) -> Any:
    """EXIF values as JSON, kept as read (rationals as "num/den", text without NULs)."""
    # Numbers first: an int has a numerator and a denominator too (6 is not "6/1").
    if isinstance(value, int) or value is None:
        return value
    if isinstance(value, float):  # NaN and infinities are not JSON (jsonb refuses them)
        return value if math.isfinite(value) else str(value)
    if isinstance(value, bytes):
        return value.rstrip(b"\x00").decode("utf-8", "replace").replace("\x00", "")
    if isinstance(value, str):
        return value.rstrip("\x00").replace("\x00", "")
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    if hasattr(value, "numerator") and hasattr(value, "denominator"):
        return f"{value.numerator}/{value.denominator}"  # "1/0" too: kept as read
    return str(value)


def _degrees(dms: Any, ref: Any) -> float | None:
    try:
        d, m, s = (float(v) for v in dms)  # a zero denominator gives NaN, never raises
    except (TypeError, ValueError, ZeroDivisionError):
        return None
    value = d + m / 60 + s / 3600
    if not math.isfinite(value):
        return None
    if _ref(ref) in ("S", "W"):
        value = -value
    return round(value, 7)


def _ref(ref: Any) -> str:
    return "" if ref is None else str(_plain(ref)).strip().upper()


def valid_orientation(value: Any) -> int | None:
    """The EXIF orientation if it is one of the eight the standard defines, else None."""
    if isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= 8:
        return value
    return None


_TAGS = {271: "Make", 272: "Model", 274: "Orientation", 305: "Software", 306: "DateTime"}
_EXIF_TAGS = {36867: "DateTimeOriginal", 36868: "DateTimeDigitized", 36881: "OffsetTimeOriginal"}
_GPS_TAGS = {1: "GPSLatitudeRef", 2: "GPSLatitude", 3: "GPSLongitudeRef", 4: "GPSLongitude"}
_GPS_TAGS |= {5: "GPSAltitudeRef", 6: "GPSAltitude", 7: "GPSTimeStamp", 29: "GPSDateStamp"}


def read_exif(img: Image.Image, result: IntakeResult) -> None:
    """EXIF from the file's header: no pixel is decoded."""
    exif = img.getexif()
    if not exif:
        return
    md: dict[str, Any] = {name: _plain(exif[tag]) for tag, name in _TAGS.items() if tag in exif}
    sub = exif.get_ifd(0x8769)
    md |= {name: _plain(sub[tag]) for tag, name in _EXIF_TAGS.items() if tag in sub}
    gps = exif.get_ifd(0x8825)
    md |= {name: _plain(gps[tag]) for tag, name in _GPS_TAGS.items() if tag in gps}
    result.metadata = md
    result.camera_make = str(md.get("Make", ""))[:100]
    result.camera_model = str(md.get("Model", ""))[:100]
    result.taken_at = str(md.get("DateTimeOriginal") or md.get("DateTime") or "")[:40]
    if 274 in exif:
        result.orientation = valid_orientation(exif[274])
        if result.orientation is None:  # the raw value stays in the metadata
            result.flag(
                "exif_orientation_invalid",
                f"EXIF Orientation is {md['Orientation']!r}, not 1 to 8: not used, "
                "the thumbnail is not turned",
            )
    if 2 in gps and 4 in gps:
        _read_position(gps, result)


_REFS = ((1, "GPSLatitudeRef", ("N", "S"), "north"), (3, "GPSLongitudeRef", ("E", "W"), "east"))


def _read_position(gps: Any, result: IntakeResult) -> None:
    lat, lon = _degrees(gps[2], gps.get(1)), _degrees(gps[4], gps.get(3))
    if lat is None or lon is None or abs(lat) > 90 or abs(lon) > 180:
        result.flag("gps_invalid", "GPS position unreadable or out of range: not used")
        return
    result.gps = (lat, lon)
    # Without its reference a coordinate's sign is a guess: say so to the reviewer.
    assumed = [
        f"{name} {'missing' if not _ref(gps.get(tag)) else repr(_ref(gps.get(tag)))}, "
        f"taken as {default}"
        for tag, name, allowed, default in _REFS
        if _ref(gps.get(tag)) not in allowed
    ]
    if assumed:
        result.flag(
            "gps_ref_missing",
            "; ".join(assumed) + ": the position's sign is an assumption, check it",
        )


def taken_date(taken_at: str):
    try:
        return datetime.strptime(taken_at[:19], "%Y:%m:%d %H:%M:%S").date()  # noqa: DTZ007
    except ValueError:
        return None


# -- pixels ------------------------------------------------------------------------------
def dhash(img: Image.Image) -> int:
    """64-bit difference hash, as a signed integer (fits a BIGINT column)."""
    small = img.convert("L").resize((9, 8), Image.Resampling.BILINEAR)
    px = small.tobytes()
    bits = 0
    for row in range(8):
        base = row * 9
        for col in range(8):
            bits = (bits << 1) | (px[base + col] > px[base + col + 1])
    return bits - (1 << 64) if bits >= 1 << 63 else bits


# EXIF orientation → the turn that makes the picture upright (as ImageOps.exif_transpose).
_UPRIGHT = {
    2: Image.Transpose.FLIP_LEFT_RIGHT,
    3: Image.Transpose.ROTATE_180,
    4: Image.Transpose.FLIP_TOP_BOTTOM,
    5: Image.Transpose.TRANSPOSE,
    6: Image.Transpose.ROTATE_270,
    7: Image.Transpose.TRANSVERSE,
    8: Image.Transpose.ROTATE_90,
}


def make_reduced(
    img: Image.Image, size: int, orientation: int | None, resample: Image.Resampling
) -> Image.Image:
    """Decode at a reduced scale where the format allows (JPEG DCT scaling), then resize.

    Turned upright after shrinking, by the orientation already read from the EXIF: the
    same picture at a fraction of the cost, and the header is not parsed a second time.
    """
    img.draft("RGB", (size, size))
    if img.mode not in ("RGB", "L"):
        img = img.convert("RGB")
    img.thumbnail((size, size), resample, reducing_gap=2.0)
    turn = _UPRIGHT.get(valid_orientation(orientation) or 1)  # only the eight defined
    return img.transpose(turn) if turn is not None else img


def encode_jpeg(img: Image.Image, quality: int) -> bytes:
    out = io.BytesIO()
    img.save(out, "JPEG", quality=quality)
    return out.getvalue()


# The blurred thumbnail of a graphic item, made from its thumbnail: greyscale, shrunk to
# BLUR_REDUCE pixels on its longer side (nothing smaller than a sixteenth of the picture
# survives), blurred there with a Gaussian radius of an eighth of that, then enlarged to a
# quarter of the thumbnail's size, smoothed there (no blocks to read shapes from) and
# enlarged to its size. About 0.65 ms a photo in an intake worker, its JPEG and write
# included. Recorded with each one.
BLUR_REDUCE = 16
BLUR_RADIUS = BLUR_REDUCE / 8
BLUR_SMOOTH = 2
BLUR_QUALITY = 60
BLUR_PARAMETERS = {
    "from": "thumbnail",
    "mode": "greyscale",
    "reduce_to": BLUR_REDUCE,
    "gaussian_radius": BLUR_RADIUS,
    "smooth_at": "1/4",
    "smooth_radius": BLUR_SMOOTH,
    "enlarge": "bicubic, then bilinear",
    "quality": BLUR_QUALITY,
}


def blur(img: Image.Image) -> Image.Image:
    """``img`` (a thumbnail) past recognition, at its own size, as BLUR_PARAMETERS say."""
    small = img.convert("L")
    small.thumbnail((BLUR_REDUCE, BLUR_REDUCE), Image.Resampling.BOX)
    small = small.filter(ImageFilter.GaussianBlur(BLUR_RADIUS))
    quarter = (max(1, img.width // 4), max(1, img.height // 4))
    smooth = small.resize(quarter, Image.Resampling.BICUBIC)
    smooth = smooth.filter(ImageFilter.GaussianBlur(BLUR_SMOOTH))
    return smooth.resize(img.size, Image.Resampling.BILINEAR)


def blurred_jpeg(thumbnail: bytes) -> Picture:
    """The blurred JPEG of a thumbnail's bytes (a derivative made after intake)."""
    with Image.open(io.BytesIO(thumbnail), formats=["JPEG"]) as img:
        made = blur(img)
    return Picture(encode_jpeg(made, BLUR_QUALITY), made.width, made.height)


def decode_image(
    data: bytes, result: IntakeResult, storage: WriteOnceStore, blurred: bool = False
) -> None:
    """EXIF, thumbnail and perceptual hash; with ``blurred`` (a graphic batch), the
    blurred thumbnail too, from the thumbnail in hand (no second decode)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", Image.DecompressionBombWarning)
        img = Image.open(io.BytesIO(data), formats=PIL_FORMATS)  # reads the header only
        result.width, result.height = img.size
        if img.width * img.height > MAX_PIXELS:
            result.flag(
                "decompression_bomb",
                f"{img.width} x {img.height} pixels claimed; not decoded (limit {MAX_PIXELS:,})",
            )
            return
        try:
            read_exif(img, result)
        except Exception as exc:
            result.flag("bad_metadata", f"EXIF unreadable: {exc}")
        # Area averaging: after the DCT-scaled decode the last step is less than 2:1,
        # where a box filter is as sharp as a bicubic one and a third of its cost.
        thumb = make_reduced(img, THUMBNAIL_SIZE, result.orientation, Image.Resampling.BOX)
    data = encode_jpeg(thumb, THUMBNAIL_QUALITY)
    key = derivative_key(result.sha256, "thumbnail", "jpg")
    result.phash = dhash(thumb)
    try:
        storage.write_derivative(key, data)
    except OSError as exc:  # a full disk, say: the picture is fine, its thumbnail is not
        result.flag(
            "derivative_failed",
            f"thumbnail not stored ({exc}); the original is stored, and `manage.py "
            "make_thumbnails` makes the thumbnail from it",
        )
        return
    result.thumbnail = Thumbnail(
        key,
        thumb.width,
        thumb.height,
        len(data),
        dict(THUMBNAIL_PARAMETERS),
    )
    if blurred:
        _store_blurred(thumb, result, storage)


def _store_blurred(thumb: Image.Image, result: IntakeResult, storage: WriteOnceStore) -> None:
    made = blur(thumb)
    data = encode_jpeg(made, BLUR_QUALITY)
    key = derivative_key(result.sha256, "blurred", "jpg")
    try:
        storage.write_derivative(key, data)
    except OSError:
        return  # made on first request instead, from the thumbnail
    result.blurred = Thumbnail(key, made.width, made.height, len(data), dict(BLUR_PARAMETERS))


class Picture(NamedTuple):
    data: bytes
    width: int
    height: int


PREVIEW_QUALITY = 85
PREVIEW_PARAMETERS = {
    "max": PREVIEW_SIZE,
    "quality": PREVIEW_QUALITY,
    "resample": "bicubic",
    "exif_transpose": True,
}


def reduced_jpeg(fh: IO[bytes], params: dict[str, Any]) -> Picture:
    """A JPEG of the picture in ``fh`` made as ``params`` say (a thumbnail's recorded
    parameters, or PREVIEW_PARAMETERS); raises if it cannot be decoded or is too large."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", Image.DecompressionBombWarning)
        img = Image.open(fh, formats=PIL_FORMATS)
        if img.width * img.height > MAX_PIXELS:
            raise ValueError("image too large to decode")
        orientation = None
        if params.get("exif_transpose", True):
            try:
                orientation = img.getexif().get(274)
            except Exception:  # unreadable EXIF: made without turning, as at intake
                orientation = None
        reduced = make_reduced(
            img,
            int(params.get("max", THUMBNAIL_SIZE)),
            valid_orientation(orientation),
            Image.Resampling[str(params.get("resample", "box")).upper()],
        )
        data = encode_jpeg(reduced, int(params.get("quality", THUMBNAIL_QUALITY)))
    return Picture(data, reduced.width, reduced.height)
