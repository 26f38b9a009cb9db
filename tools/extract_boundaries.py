"""Write places/boundaries/levant.json: the outlines of Syria and its neighbours, taken
from the npm package world-atlas (Natural Earth 1:50m admin-0 countries, public domain),
installed by ``make map-data`` into tools/world-atlas. The app reads only the written
file, which is committed: nothing is fetched when the app runs.

    make map-data
"""

from __future__ import annotations

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "tools/world-atlas/node_modules/world-atlas/countries-50m.json"
TARGET = ROOT / "places/boundaries/levant.json"
# ISO 3166 numeric codes: Syria first, then its neighbours and the coast opposite.
COUNTRIES = {
    "760": "SY",
    "422": "LB",
    "400": "JO",
    "368": "IQ",
    "792": "TR",
    "376": "IL",
    "275": "PS",
    "196": "CY",
}


def _arcs(topology: dict) -> list[list[tuple[float, float]]]:
    (sx, sy), (tx, ty) = topology["transform"]["scale"], topology["transform"]["translate"]
    decoded = []
    for arc in topology["arcs"]:
        x = y = 0
        points = []
        for dx, dy in arc:
            x, y = x + dx, y + dy
            points.append((round(x * sx + tx, 3), round(y * sy + ty, 3)))
        decoded.append(points)
    return decoded


def _ring(indexes: list[int], arcs: list[list[tuple[float, float]]]) -> list[tuple[float, float]]:
    ring: list[tuple[float, float]] = []
    for index in indexes:
        points = arcs[index] if index >= 0 else arcs[~index][::-1]
        ring.extend(points[1:] if ring else points)
    return ring


def main() -> None:
    topology = json.loads(SOURCE.read_text())
    arcs = _arcs(topology)
    countries = []
    for shape in topology["objects"]["countries"]["geometries"]:
        code = COUNTRIES.get(str(shape.get("id")))
        if code is None:
            continue
        polygons = shape["arcs"] if shape["type"] == "MultiPolygon" else [shape["arcs"]]
        rings = [_ring(ring, arcs) for polygon in polygons for ring in polygon]
        countries.append({"code": code, "name": shape["properties"]["name"], "rings": rings})
    countries.sort(key=lambda c: list(COUNTRIES.values()).index(c["code"]))
    TARGET.write_text(
        json.dumps(
            {
                "source": "Natural Earth 1:50m admin-0 countries (public domain), "
                "via the npm package world-atlas 2.0.2",
                "countries": countries,
            },
            separators=(",", ":"),
        )
        + "\n"
    )


if __name__ == "__main__":
    main()
