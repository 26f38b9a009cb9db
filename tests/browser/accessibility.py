"""axe-core (from the npm registry, tools/axe) run on a page the browser tests opened.

The script is evaluated in the page through the browser's debugging protocol, so the
page's Content-Security-Policy (``script-src 'self'``) stays as it is."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from tests.scratch_db import ROOT

AXE = ROOT / "tools" / "axe" / "node_modules" / "axe-core" / "axe.min.js"
BLOCKING = ("serious", "critical")


@cache
def _axe_source() -> str:
    if not Path(AXE).exists():
        raise FileNotFoundError(f"{AXE} is missing: `make browser-deps` installs axe-core")
    return AXE.read_text(encoding="utf-8")


def violations(page, impacts: tuple[str, ...] = BLOCKING) -> list[str]:
    """The WCAG 2.1 A/AA violations of ``impacts`` on the page as it stands, one line each:
    rule, impact, and the elements concerned."""
    if not page.evaluate("() => typeof window.axe !== 'undefined'"):
        page.evaluate(_axe_source())
    result = page.evaluate(
        """async () => {
            const r = await axe.run(document, {runOnly: {type: 'tag',
                values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']}});
            return r.violations.map(v => ({id: v.id, impact: v.impact,
                nodes: v.nodes.map(n => n.target.join(' ')).slice(0, 5)}));
        }"""
    )
    return [
        f"{v['id']} ({v['impact']}) at {', '.join(v['nodes'])} on {page.url}"
        for v in result
        if v["impact"] in impacts
    ]
