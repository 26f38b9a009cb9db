"""The diff of two versions of a statement: right, and its work bounded by the length of
the statements, never by its square (``difflib.ndiff`` took 24 s on 1,200 lines).

The bound is shown without a clock: the diff runs under a tracer that counts the lines
of Python it executes (its own and any library's it calls) and stops it past a budget
proportional to the statements' length. Measured: about 9 to 21 traced lines per line
of input (``bench/testimony_diff.py`` gives the times)."""

import random
import sys

import pytest

from people import models, services
from people.linediff import Work, diff_lines, with_context

LINES_PER_LINE = 40  # traced lines of Python allowed per line of the two statements


class OverBudget(Exception):
    pass


def _traced_lines(call, budget):
    """Run ``call`` counting the Python lines it executes; stop it past ``budget``."""
    count = 0

    def tracer(frame, event, arg):
        nonlocal count
        if event == "line":
            count += 1
            if count > budget:
                raise OverBudget(f"more than {budget} lines")
        return tracer

    previous = sys.gettrace()
    sys.settrace(tracer)
    try:
        result = call()
    finally:
        sys.settrace(previous)
    return result, count


def _statement(rnd, n):
    words = ["the", "bus", "branch", "door", "night", "brother", "guard", "cell", "dawn"]
    return [f"{i}. " + " ".join(rnd.choice(words) for _ in range(9)) for i in range(n)]


def _scattered(rnd, lines):
    """A revision: some lines corrected, some added, some removed, here and there."""
    new = list(lines)
    for k in rnd.sample(range(len(new)), 100):
        new[k] += " (corrected)"
    for k in sorted(rnd.sample(range(len(new)), 50), reverse=True):
        new.insert(k, "A detail the witness added.")
    for k in sorted(rnd.sample(range(len(new)), 50), reverse=True):
        del new[k]
    return new


def _revisions():
    rnd = random.Random(14)
    old = _statement(rnd, 10_000)
    paragraphs = [x for line in old for x in (line, "")]
    blocks = [old[i : i + 20] for i in range(0, len(old), 20)]
    rnd.shuffle(blocks)
    return {
        "scattered changes": (old, _scattered(rnd, old)),
        "every line edited": (old, [line.replace("the", "a") + "." for line in old]),
        "blank lines between paragraphs": (
            paragraphs,
            [x for ln in _scattered(rnd, old) for x in (ln, "")],
        ),
        "paragraphs moved": (old, [line for block in blocks for line in block]),
        "rewritten": (old, _statement(rnd, 10_000)),
    }


REVISIONS = _revisions()


def _version(lines):
    return models.TestimonyVersion(text="\n".join(lines))


@pytest.mark.parametrize("name", list(REVISIONS))
def test_diffing_two_10000_line_versions_takes_work_in_proportion_to_their_length(name):
    old, new = REVISIONS[name]
    budget = LINES_PER_LINE * (len(old) + len(new))
    rows, _ = _traced_lines(lambda: services.diff_versions(_version(old), _version(new)), budget)
    assert rows


@pytest.mark.parametrize("name", list(REVISIONS))
def test_the_diff_gives_back_both_versions(name):
    old, new = REVISIONS[name]
    rows = diff_lines(old, new)
    assert [line for tag, line in rows if tag in " -"] == old
    assert [line for tag, line in rows if tag in " +"] == new


def test_scattered_changes_are_shown_as_just_those_lines_with_context():
    rnd = random.Random(3)
    old = _statement(rnd, 10_000)
    new = list(old)
    new[10] += " (corrected)"
    new.insert(5000, "A detail the witness added.")
    del new[9000]
    work = Work()
    rows = diff_lines(old, new, work)
    changed = [(tag, line) for tag, line in rows if tag != " "]
    assert changed == [
        ("-", old[10]),
        ("+", new[10]),
        ("+", "A detail the witness added."),
        ("-", old[8999]),
    ]
    assert work.steps < 10 * (len(old) + len(new))
    shown = with_context(rows)
    # Three unchanged lines beside each change; the runs between them folded.
    assert shown[:4] == [("…", 7), *((" ", old[i]) for i in range(7, 10))]
    assert [n for tag, n in shown if tag == "…"] == [7, 4983, 3993, 997]
    assert sum(1 for tag, _ in shown if tag == " ") == 18


def test_a_small_revision_is_the_smallest_change():
    old = ["a", "b", "c", "a", "b", "b", "a"]
    new = ["c", "b", "a", "b", "a", "c"]
    rows = diff_lines(old, new)
    assert sum(1 for tag, _ in rows if tag == " ") == 4  # the longest common subsequence
