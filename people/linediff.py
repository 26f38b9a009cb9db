"""A line diff of two statements whose work grows with their length, not its square.

``difflib.ndiff`` compares every removed line with every added one to find the closest
pairs: a statement of 1,200 lines revised throughout made each view of it take 24 s.
This diff never compares lines character by character:

1. lines are numbered (equal lines get the same number) and the common head and tail
   are taken off;
2. the lines found exactly once on each side anchor the rest: the longest run of such
   lines in the same order on both sides (patience diff, O(n log n)) is kept as
   unchanged, and the gaps between anchors are diffed the same way, at most
   ``MAX_DEPTH`` levels deep;
3. a gap without anchors is compared line by line (the classic longest common
   subsequence table) only while its table stays within ``CELLS_PER_LINE`` cells per line
   of the gap; a larger one is shown as removed, then added — correct, not minimal.

``Work`` counts the steps taken, so a test can show the bound without a clock.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import Counter
from dataclasses import dataclass

MAX_DEPTH = 12
CELLS_PER_LINE = 16


@dataclass
class Work:
    """Steps taken: lines looked at, anchors sorted, table cells filled."""

    steps: int = 0


def diff_lines(old: list[str], new: list[str], work: Work | None = None) -> list[tuple[str, str]]:
    """``old`` to ``new`` as (tag, line) pairs, tag one of ' ' (kept), '-', '+'."""
    return _LineDiff(old, new, work if work is not None else Work()).run()


class _LineDiff:
    def __init__(self, old: list[str], new: list[str], work: Work) -> None:
        numbers: dict[str, int] = {}
        self.old, self.new = old, new
        self.a = [numbers.setdefault(line, len(numbers)) for line in old]
        self.b = [numbers.setdefault(line, len(numbers)) for line in new]
        self.work = work
        self.work.steps += len(old) + len(new)
        self.out: list[tuple[str, str]] = []

    def run(self) -> list[tuple[str, str]]:
        self._diff(0, len(self.a), 0, len(self.b), 0)
        return self.out

    def _kept(self, i: int) -> None:
        self.out.append((" ", self.old[i]))

    def _removed(self, lo: int, hi: int) -> None:
        self.out.extend(("-", line) for line in self.old[lo:hi])

    def _added(self, lo: int, hi: int) -> None:
        self.out.extend(("+", line) for line in self.new[lo:hi])

    def _diff(self, alo: int, ahi: int, blo: int, bhi: int, depth: int) -> None:
        a, b = self.a, self.b
        start = alo
        while alo < ahi and blo < bhi and a[alo] == b[blo]:
            alo, blo = alo + 1, blo + 1
        end = ahi
        while alo < ahi and blo < bhi and a[ahi - 1] == b[bhi - 1]:
            ahi, bhi = ahi - 1, bhi - 1
        self.work.steps += (alo - start) + (end - ahi)
        for i in range(start, alo):
            self._kept(i)
        if alo == ahi or blo == bhi:
            self._removed(alo, ahi)
            self._added(blo, bhi)
        else:
            anchors = self._anchors(alo, ahi, blo, bhi) if depth < MAX_DEPTH else []
            if anchors:
                i0, j0 = alo, blo
                for i, j in anchors:
                    self._diff(i0, i, j0, j, depth + 1)
                    self._kept(i)
                    i0, j0 = i + 1, j + 1
                self._diff(i0, ahi, j0, bhi, depth + 1)
            else:
                self._table(alo, ahi, blo, bhi)
        for i in range(ahi, end):
            self._kept(i)

    def _anchors(self, alo: int, ahi: int, blo: int, bhi: int) -> list[tuple[int, int]]:
        """Lines found once on each side, the longest run of them in the same order."""
        a, b = self.a, self.b
        in_a = Counter(a[alo:ahi])
        in_b = Counter(b[blo:bhi])
        self.work.steps += (ahi - alo) + (bhi - blo)
        where_b = {b[j]: j for j in range(blo, bhi) if in_b[b[j]] == 1}
        pairs = [(i, where_b[a[i]]) for i in range(alo, ahi) if in_a[a[i]] == 1 and a[i] in where_b]
        if not pairs:
            return []
        # Longest increasing run of positions in ``new`` (patience sorting).
        self.work.steps += len(pairs) * len(pairs).bit_length()
        tails: list[int] = []  # tails[k]: the smallest position ending a run of k + 1
        tail_at: list[int] = []  # index in ``pairs`` of that tail
        before: list[int] = [-1] * len(pairs)
        for n, (_, j) in enumerate(pairs):
            k = bisect_left(tails, j)
            if k == len(tails):
                tails.append(j)
                tail_at.append(n)
            else:
                tails[k], tail_at[k] = j, n
            before[n] = tail_at[k - 1] if k else -1
        run, n = [], tail_at[-1]
        while n != -1:
            run.append(pairs[n])
            n = before[n]
        return run[::-1]

    def _table(self, alo: int, ahi: int, blo: int, bhi: int) -> None:
        """A gap without anchors: the longest common subsequence while it is small."""
        p, q = ahi - alo, bhi - blo
        if p * q > CELLS_PER_LINE * (p + q):
            self._removed(alo, ahi)
            self._added(blo, bhi)
            return
        self.work.steps += p * q
        a, b = self.a[alo:ahi], self.b[blo:bhi]
        # lcs[i][j]: length of the longest common subsequence of a[i:] and b[j:].
        lcs = [[0] * (q + 1) for _ in range(p + 1)]
        for i in range(p - 1, -1, -1):
            row, below = lcs[i], lcs[i + 1]
            for j in range(q - 1, -1, -1):
                row[j] = below[j + 1] + 1 if a[i] == b[j] else max(below[j], row[j + 1])
        i = j = 0
        while i < p and j < q:
            if a[i] == b[j]:
                self._kept(alo + i)
                i, j = i + 1, j + 1
            elif lcs[i + 1][j] >= lcs[i][j + 1]:
                self._removed(alo + i, alo + i + 1)
                i += 1
            else:
                self._added(blo + j, blo + j + 1)
                j += 1
        self._removed(alo + i, ahi)
        self._added(blo + j, bhi)


def with_context(rows: list[tuple[str, str]], context: int = 3) -> list[tuple[str, str | int]]:
    """The rows with each run of unchanged lines longer than ``2 * context`` folded into
    one ('…', how many lines) row, keeping ``context`` lines beside each change."""
    out: list[tuple[str, str | int]] = []
    n, i = len(rows), 0
    while i < n:
        if rows[i][0] != " ":
            out.append(rows[i])
            i += 1
            continue
        j = i
        while j < n and rows[j][0] == " ":
            j += 1
        keep_head = context if i > 0 else 0
        keep_tail = context if j < n else 0
        if j - i > keep_head + keep_tail:
            out.extend(rows[i : i + keep_head])
            out.append(("…", j - i - keep_head - keep_tail))
            out.extend(rows[j - keep_tail : j])
        else:
            out.extend(rows[i:j])
        i = j
    return out
