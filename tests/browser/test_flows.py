"""Flows people click through, in headless Chromium against a real server process."""

import shutil
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

from tests.scratch_db import ROOT, run_manage, scratch_database

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="Debian chromium is not installed")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """`make run` in small: a migrated scratch database with the demo data, served."""
    with scratch_database(tmp_path_factory.mktemp("server")) as env:
        env = {**env, "ATHAR_DEMO_MODE": "1", "ATHAR_DEBUG": "0"}
        run_manage(env, "seed_demo")
        run_manage(env, "seed_demo_evidence")
        port = _free_port()
        proc = subprocess.Popen(
            [
                sys.executable,
                str(ROOT / "manage.py"),
                "runserver",
                "--noreload",
                f"127.0.0.1:{port}",
            ],
            env=env,
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        url = f"http://127.0.0.1:{port}"
        for _ in range(100):
            try:
                urllib.request.urlopen(f"{url}/accounts/login/", timeout=1)  # noqa: S310
                break
            except OSError:
                time.sleep(0.1)
        try:
            yield url
        finally:
            proc.terminate()
            proc.wait(timeout=10)


@pytest.fixture
def page(server):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=CHROMIUM,
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
            ],
        )
        context = browser.new_context(base_url=server)
        outside = []
        context.on(
            "request", lambda r: outside.append(r.url) if not r.url.startswith(server) else None
        )
        page = context.new_page()
        yield page
        browser.close()
        assert outside == []  # no page asked anything of another server


def _sign_in(page, username):
    page.goto("/")
    page.fill("#id_username", username)
    page.fill("#id_password", f"athar-demo-{username}")
    page.click("button[type=submit]:has-text('Sign in')")


def test_an_investigator_signs_in_and_looks_at_a_photo_and_its_custody(page):
    _sign_in(page, "investigator")
    page.wait_for_url("**/cases/")
    assert page.locator("table.list tbody tr").count() == 1  # exactly their one case
    page.click("text=DEMO-2014-001")
    page.click("main >> text=Evidence")
    tiles = page.locator("ul.gallery li.tile img")
    assert tiles.count() == 12
    page.locator("ul.gallery li.tile a").first.click()
    assert page.locator("code.hash").first.inner_text().strip().__len__() == 64
    assert page.locator("ol.timeline li").first.inner_text().startswith("20")
    assert "Acquired" in page.locator("ol.timeline").inner_text()
    # The preview is made on this first view; the browser shows it once it arrives.
    page.wait_for_function(
        "() => { const i = document.querySelector('.viewer img');"
        " return i && i.complete && i.naturalWidth > 0; }"
    )


def test_the_interface_switches_to_arabic_right_to_left(page):
    _sign_in(page, "lawyer")
    page.wait_for_url("**/cases/")
    page.click("button[lang=ar]")
    page.wait_for_selector("html[dir=rtl]")
    assert page.locator("html").get_attribute("lang") == "ar"
    assert "قضاياي" in page.locator("h1").inner_text()
