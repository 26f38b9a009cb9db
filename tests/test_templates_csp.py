"""No template carries what the pages' Content-Security-Policy blocks.

``SECURE_CSP`` allows styles and scripts from the app's own files only (``style-src`` and
``script-src`` are ``'self'``, no ``'unsafe-inline'``): a browser ignores a ``style=""``
attribute, a ``<style>`` element, an inline ``<script>`` and an ``on...=`` handler, so a
page that relies on one looks or behaves otherwise than its author saw. Styles go in
static/css/, scripts in static/js/.
"""

from html.parser import HTMLParser
from pathlib import Path

from django.conf import settings
from django.template.utils import get_app_template_dirs
from django.utils.csp import CSP

from tests.scratch_db import ROOT

# Not pages: a template rendered for another reader than a browser, with why.
NOT_PAGES = {
    "disclosure/report.html": "the custody report's source, read by WeasyPrint into a PDF",
}


def _template_dirs() -> list[Path]:
    dirs = [Path(d) for d in settings.TEMPLATES[0]["DIRS"]]
    dirs += [Path(d) for d in get_app_template_dirs("templates")]
    ours = [d for d in dirs if d.is_relative_to(ROOT) and ".venv" not in d.parts]
    return sorted(set(ours))


class _Blocked(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.found: list[str] = []

    def handle_starttag(self, tag, attrs):
        names = {name.lower(): value for name, value in attrs}
        line = self.getpos()[0]
        if "style" in names:
            self.found.append(f"line {line}: a style attribute on <{tag}>")
        if tag == "style":
            self.found.append(f"line {line}: a <style> element")
        if tag == "script" and not names.get("src"):
            self.found.append(f"line {line}: a <script> without src")
        for name in names:
            if name.startswith("on") and name.isalpha() and len(name) > 2:
                self.found.append(f"line {line}: an {name}= handler on <{tag}>")
        for value in names.values():
            if (value or "").strip().lower().startswith("javascript:"):
                self.found.append(f"line {line}: a javascript: address on <{tag}>")


def blocked_in(html: str) -> list[str]:
    parser = _Blocked()
    parser.feed(html)
    parser.close()
    return parser.found


def test_the_policy_allows_no_inline_style_or_script():
    for directive in ("style-src", "script-src"):
        assert settings.SECURE_CSP[directive] == [CSP.SELF]


def test_the_check_sees_each_kind_of_inline_style_and_script():
    assert len(blocked_in('<ul class="a" style="padding:0">')) == 1
    assert len(blocked_in("<style>p {}</style>")) == 1
    assert len(blocked_in("<script>alert(1)</script>")) == 1
    assert len(blocked_in('<button onclick="go()">')) == 1
    assert len(blocked_in('<a href="javascript:go()">')) == 1
    assert blocked_in('<script src="/static/js/keys.js" defer></script><p class="style">') == []


def test_no_template_has_an_inline_style_or_script():
    dirs = _template_dirs()
    assert ROOT / "templates" in dirs
    found, seen = {}, 0
    for folder in dirs:
        for path in sorted(folder.rglob("*.html")):
            name = path.relative_to(folder).as_posix()
            if name in NOT_PAGES:
                continue
            seen += 1
            if problems := blocked_in(path.read_text()):
                found[name] = problems
    assert seen > 50
    assert found == {}


def test_what_is_not_a_page_is_never_served_as_one():
    """The exempt templates are rendered only where their reason says."""
    packages = [p for p in ROOT.iterdir() if (p / "__init__.py").exists() and p.name != "tests"]
    users = {
        path.relative_to(ROOT).as_posix()
        for package in packages
        for path in package.rglob("*.py")
        if "disclosure/report.html" in path.read_text()
    }
    assert users == {"disclosure/report.py"}
