"""ISO 6709 positions, as phones and cameras write them into QuickTime and MP4 files
(``©xyz``, ``com.apple.quicktime.location.ISO6709``): "+33.5138+036.2765+680.000/".

Latitude then longitude, each signed, in decimal degrees (±DD.DD, ±DDD.DD), degrees and
minutes (±DDMM.MM, ±DDDMM.MM) or degrees, minutes and seconds (±DDMMSS.S, ±DDDMMSS.S),
told apart by the number of digits before the point; then an optional signed altitude in
metres, an optional coordinate reference ("CRSWGS_84") and the closing "/"."""

from __future__ import annotations

import math
import re
from typing import NamedTuple

_NUMBER = r"[+-]\d+(?:\.\d*)?"
_FORM = re.compile(rf"({_NUMBER})({_NUMBER})({_NUMBER})?(?:CRS[\w.:-]*)?/?")


class Position(NamedTuple):
    latitude: float
    longitude: float
    altitude: float | None = None


def _angle(text: str, degree_digits: int) -> float | None:
    """One signed angle; ``degree_digits``: 2 for a latitude, 3 for a longitude."""
    sign = -1 if text[0] == "-" else 1
    whole, _, fraction = text[1:].partition(".")
    fraction = f"0.{fraction or 0}"
    digits = len(whole)
    if digits <= degree_digits:  # degrees (some writers drop the leading zeros)
        value = int(whole) + float(fraction)
    elif digits == degree_digits + 2:  # degrees and minutes
        minutes = int(whole[-2:]) + float(fraction)
        if minutes >= 60:
            return None
        value = int(whole[:-2]) + minutes / 60
    elif digits == degree_digits + 4:  # degrees, minutes and seconds
        minutes, seconds = int(whole[-4:-2]), int(whole[-2:]) + float(fraction)
        if minutes >= 60 or seconds >= 60:
            return None
        value = int(whole[:-4]) + minutes / 60 + seconds / 3600
    else:
        return None
    return sign * value


def parse_iso6709(text: str) -> Position | None:
    """The position ``text`` says, in decimal degrees (rounded to 7 places, about a
    centimetre) and metres; None if it is not an ISO 6709 point or is out of range."""
    match = _FORM.fullmatch(text.strip())
    if match is None:
        return None
    lat, lon = _angle(match[1], 2), _angle(match[2], 3)
    if lat is None or lon is None or abs(lat) > 90 or abs(lon) > 180:
        return None
    alt = float(match[3]) if match[3] else None
    if alt is not None and not math.isfinite(alt):
        alt = None
    return Position(round(lat, 7), round(lon, 7), alt)
