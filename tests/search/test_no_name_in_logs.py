"""A searched name leaves no trace on the server (issue 29, decision 0024).

A real server (``manage.py runserver`` on a scratch database with the demo data, its
output captured) and a client that does what a browser does: it signs in as the demo
lead, opens a page, fills the header's search box with the name of the case's
critical-protection source and sends that form as the page declares it, following the
redirects. The search finds him. Then no part of his name (each word of three letters
or more, in either script, as typed, lower-cased or percent-encoded) is in the server's
log output, in any URL the client asked for or any ``Location`` it was sent to, in any
row of any table (the audit log, the sessions...), or in any file under the server's
data directory (the SQLite database and its journal included, as raw bytes).
"""

import json
import re
import socket
import sqlite3
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
import zlib
from html.parser import HTMLParser
from http.cookiejar import CookieJar

import psycopg
from django.core import signing

from tests.scratch_db import ROOT, run_manage, scratch_database

NAME_LATIN = "Walid Munir al-Khatib"
NAME_AR = "وليد منير الخطيب"
CODE = "W-0003"  # the demo's photographer (demo/story.py), registered by the lead


def _words() -> list[str]:
    return [w for w in re.findall(r"\w+", f"{NAME_LATIN} {NAME_AR}") if len(w) >= 3]


def _spellings(word: str) -> set[bytes]:
    """How a word could be written down: as typed, lower-cased, percent-encoded, as a
    JSON string escapes it."""
    quoted = urllib.parse.quote(word)
    forms = {word, word.lower(), quoted, quoted.lower(), json.dumps(word)[1:-1]}
    return {f.encode() for f in forms}


def _holding(blob: bytes) -> list[str]:
    low = blob.lower()
    return [w for w in _words() if any(s.lower() in low for s in _spellings(w))]


def _counts(blob: bytes) -> dict[str, int]:
    """How often each word of the name is in ``blob``, in any of its spellings."""
    low = blob.lower()
    counts = {w: sum(low.count(s.lower()) for s in _spellings(w)) for w in _words()}
    return {w: n for w, n in counts.items() if n}


def _snapshot(tmp_path, env) -> dict[str, dict[str, int]]:
    """The name's words in every file under ``tmp_path`` (the data directory, the SQLite
    database and its journal) and every table's rows. The places gazetteer has them
    already ("al-Khatib Branch", "Bani Walid"): what matters is that none is added."""
    files = {str(p): p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    tables = {f"table {t}": rows for t, rows in _rows(env).items()}
    return {k: _counts(v) for k, v in {**files, **tables}.items() if k != str(_log(tmp_path))}


def _log(tmp_path):
    return tmp_path / "server.log"


class _Forms(HTMLParser):
    """The forms of a page: attributes and the fields each sends (name, value)."""

    def __init__(self) -> None:
        super().__init__()
        self.forms: list[tuple[dict[str, str], list[tuple[str, str]]]] = []

    def handle_starttag(self, tag, attrs):
        a = {k: v or "" for k, v in attrs}
        if tag == "form":
            self.forms.append((a, []))
        elif tag in ("input", "select", "textarea") and self.forms and a.get("name"):
            self.forms[-1][1].append((a["name"], a.get("value", "")))


class _Browser:
    """Cookies, forms sent as declared, redirects followed; every URL asked for kept."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.visited: list[str] = []
        self.opener = urllib.request.build_opener(
            urllib.request.HTTPCookieProcessor(CookieJar()), _Recorder(self.visited)
        )

    def open(self, url: str, data: dict[str, str] | None = None) -> tuple[str, str]:
        url = urllib.parse.urljoin(self.base, url)
        body = urllib.parse.urlencode(data).encode() if data is not None else None
        self.visited.append(url)
        with self.opener.open(urllib.request.Request(url, data=body), timeout=30) as r:  # noqa: S310
            return r.geturl(), r.read().decode()

    def submit(self, page: str, url: str, field: str, **values: str):
        """Send the page's first form with ``field``, filled with ``values``."""
        parser = _Forms()
        parser.feed(page)
        attrs, fields = next((a, f) for a, f in parser.forms if field in dict(f))
        data = {**dict(fields), **values}
        action = urllib.parse.urljoin(url, attrs.get("action") or url)
        if attrs.get("method", "get").lower() == "post":
            return self.open(action, data)
        return self.open(f"{action}?{urllib.parse.urlencode(data)}")


class _Recorder(urllib.request.HTTPRedirectHandler):
    def __init__(self, visited: list[str]) -> None:
        self.visited = visited

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        self.visited.append(newurl)
        return super().redirect_request(req, fp, code, msg, headers, newurl)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _opened(session_data: str) -> bytes:
    """A session row's data as Django wrote it before signing (base64 JSON, maybe
    compressed): the signature is not checked, only the contents read."""
    payload = session_data.split(":", 1)[0]
    raw = signing.b64_decode(payload.removeprefix(".").encode())
    return zlib.decompress(raw) if payload.startswith(".") else raw


def _rows(env) -> dict[str, bytes]:
    """Every table of the database, each row's every column as text; the sessions also
    opened."""
    tables = _tables(env)
    url = env["DATABASE_URL"]
    query = "SELECT session_data FROM django_session"
    if url.startswith("sqlite:///"):
        with sqlite3.connect(url.removeprefix("sqlite:///"), timeout=30) as db:
            sessions = [d for (d,) in db.execute(query)]
    else:
        with psycopg.connect(url.replace("postgres://", "postgresql://", 1)) as db:
            sessions = [d for (d,) in db.execute(query)]
    tables["django_session, opened"] = b"\n".join(_opened(d) for d in sessions)
    return tables


def _tables(env) -> dict[str, bytes]:
    url = env["DATABASE_URL"]
    if url.startswith("sqlite:///"):
        with sqlite3.connect(url.removeprefix("sqlite:///"), timeout=30) as db:
            names = [
                n for (n,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            ]
            return {n: repr(db.execute(f'SELECT * FROM "{n}"').fetchall()).encode() for n in names}
    with psycopg.connect(url.replace("postgres://", "postgresql://", 1)) as db:
        names = [
            n
            for (n,) in db.execute(
                "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY 1"
            )
        ]
        return {
            n: "\n".join(r for (r,) in db.execute(f'SELECT t::text FROM "{n}" t')).encode()
            for n in names
        }


def test_a_name_searched_is_in_no_log_url_row_or_file(tmp_path):
    with scratch_database(tmp_path) as env:
        env = {**env, "ATHAR_DEMO_MODE": "1", "ATHAR_DEBUG": "0"}
        run_manage(env, "seed_demo")
        before = _snapshot(tmp_path, env)
        assert any(k.startswith("table places_") for k in before)  # what the counts are for
        port = _free_port()
        log = _log(tmp_path).open("wb")
        server = subprocess.Popen(
            [
                sys.executable,
                str(ROOT / "manage.py"),
                "runserver",
                "--noreload",
                f"127.0.0.1:{port}",
            ],
            env={**env, "PYTHONUNBUFFERED": "1"},
            cwd=ROOT,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        base = f"http://127.0.0.1:{port}"
        try:
            for _ in range(200):
                try:
                    urllib.request.urlopen(f"{base}/accounts/login/", timeout=1)  # noqa: S310
                    break
                except OSError:
                    time.sleep(0.1)
            browser = _Browser(base)
            url, page = browser.open("/accounts/login/")
            url, page = browser.submit(
                page, url, "username", username="lead", password="athar-demo-lead"
            )
            assert url.endswith("/cases/"), url
            found = []
            for name in (NAME_LATIN, NAME_AR):
                url, page = browser.submit(page, url, "q", q=name)
                found.append(CODE in page and "a name matches" in page)
            assert found == [True, True]
        finally:
            server.terminate()
            server.wait(timeout=10)
            log.close()

        output = _log(tmp_path).read_bytes()
        assert _holding(output) == []
        assert b"POST /search/" in output  # the requests are logged: only not the name
        assert [u for u in browser.visited if _holding(u.encode())] == []
        rows = _rows(env)
        assert rows["casefiles_auditentry"].count(b"search.query") == 2
        assert b"search.kept" in rows["django_session, opened"]  # the sessions are read
        after = _snapshot(tmp_path, env)
        added = {
            key: {w: n for w, n in counts.items() if n > before.get(key, {}).get(w, 0)}
            for key, counts in after.items()
        }
        assert {key: words for key, words in added.items() if words} == {}
