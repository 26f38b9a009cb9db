"""Benchmark the testimony page on a long statement revised once.

    .venv/bin/python bench/testimony_diff.py [--lines 10000] [--repeat 5] [--old-lines 1200]

Builds, in a fresh SQLite database under a temporary folder, a case with a witness and a
testimony of ``--lines`` lines, revised once in two ways: scattered changes (some lines
corrected, added, removed) and every line edited. It then times, as a signed-in lawyer
with DEBUG off:

1. the floor: the same page showing one version, without a comparison;
2. the page comparing the two versions (``?a=1&b=2``), each revision;
3. ``difflib.ndiff`` — what the page used before — on a ``--old-lines`` statement edited
   on every line, for the record (it is quadratic: don't give it 10,000 lines).

The last line reads `lines=N scattered_s=X every_line_s=Y floor_s=F ndiff_old_s=Z`.
"""

from __future__ import annotations

import argparse
import difflib
import os
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def statement(rnd: random.Random, n: int) -> list[str]:
    words = ["the", "bus", "branch", "door", "night", "brother", "guard", "cell", "dawn"]
    return [f"{i}. " + " ".join(rnd.choice(words) for _ in range(12)) for i in range(n)]


def scattered(rnd: random.Random, lines: list[str]) -> list[str]:
    new = list(lines)
    for k in rnd.sample(range(len(new)), len(new) // 100):
        new[k] += " (corrected)"
    for k in sorted(rnd.sample(range(len(new)), len(new) // 200), reverse=True):
        new.insert(k, "A detail the witness added.")
    for k in sorted(rnd.sample(range(len(new)), len(new) // 200), reverse=True):
        del new[k]
    return new


def best_of(repeat: int, call) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lines", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--old-lines", type=int, default=1_200)
    args = parser.parse_args()

    workdir = tempfile.mkdtemp(prefix="athar-bench-diff-")
    try:
        return run(args, workdir)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def run(args: argparse.Namespace, workdir: str) -> int:
    os.environ.update(
        {
            "DJANGO_SETTINGS_MODULE": "athar.settings",
            "DATABASE_URL": f"sqlite:///{workdir}/bench.sqlite3",
            "ATHAR_DATA_DIR": workdir,
            "ATHAR_DEBUG": "0",
            "ATHAR_ALLOWED_HOSTS": "testserver",
        }
    )
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.core.management import call_command
    from django.test import Client
    from django.test.utils import setup_test_environment
    from django.utils import timezone
    from django_otp import DEVICE_ID_SESSION_KEY
    from django_otp.plugins.otp_totp.models import TOTPDevice

    from casefiles.access import INVESTIGATOR_GROUP, LAWYER_GROUP, Role
    from people import services
    from people.models import Identity
    from tests.factories import CaseFactory, MembershipFactory, UserFactory

    setup_test_environment()
    call_command("migrate", verbosity=0)
    case = CaseFactory(reference="BENCH-001")
    investigator = UserFactory(username="investigator", groups=[INVESTIGATOR_GROUP])
    lawyer = UserFactory(username="lawyer", groups=[LAWYER_GROUP])
    MembershipFactory(user=investigator, case=case, role=Role.INVESTIGATOR)
    MembershipFactory(user=lawyer, case=case, role=Role.LAWYER)
    witness = services.register_person(
        actor=investigator,
        case=case,
        role="witness",
        identity=Identity(name_latin="Bench Witness"),
    )
    rnd = random.Random(14)
    first = statement(rnd, args.lines)
    revisions = {
        "scattered": scattered(rnd, first),
        "every_line": [line.replace("the", "a") + "." for line in first],
    }
    urls = {}
    for name, lines in revisions.items():
        testimony = services.create_testimony(
            actor=investigator,
            case=case,
            witness=witness,
            text="\n".join(first),
            taken_at=timezone.now(),
            language="en",
            mode="in_person",
        )
        services.revise_testimony(
            actor=investigator, testimony=testimony, text="\n".join(lines), reason=name
        )
        urls[name] = testimony.get_absolute_url()

    client = Client()
    device = TOTPDevice.objects.create(user=lawyer, name="bench", confirmed=True)
    client.force_login(lawyer)
    session = client.session
    session[DEVICE_ID_SESSION_KEY] = device.persistent_id
    session.save()

    def page(url):
        response = client.get(url)
        assert response.status_code == 200, response.status_code
        return response

    floor = best_of(args.repeat, lambda: page(urls["scattered"] + "?b=2"))
    print(f"floor (version 2 alone, {args.lines} lines): {floor:.3f} s")
    figures = {}
    for name, url in urls.items():
        figures[name] = best_of(args.repeat, lambda url=url: page(url + "?a=1&b=2"))
        size = len(page(url + "?a=1&b=2").content) // 1024
        print(f"page comparing versions 1 and 2, {name}: {figures[name]:.3f} s ({size} KiB)")
    small = first[: args.old_lines]
    edited = [line.replace("the", "a") + "." for line in small]
    start = time.perf_counter()
    for _ in difflib.ndiff(small, edited):
        pass
    ndiff_old = time.perf_counter() - start
    print(f"difflib.ndiff (before), {args.old_lines} lines each edited: {ndiff_old:.3f} s")
    print(
        f"lines={args.lines} scattered_s={figures['scattered']:.3f} "
        f"every_line_s={figures['every_line']:.3f} floor_s={floor:.3f} ndiff_old_s={ndiff_old:.3f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
