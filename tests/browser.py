"""Headless Chromium for the browser tests: Debian's ``chromium``, driven by Playwright."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = Path(shutil.which("chromium") or "/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]

needs_chromium = pytest.mark.skipif(
    not CHROMIUM.exists(), reason="Debian's chromium is not installed (`make browser` "
    "installs it as root: apt-get install -y chromium)")


@contextmanager
def opened_page(path: Path) -> Iterator[tuple[Any, list[str]]]:
    """The file ``path`` opened in headless Chromium (1280x900, 15 s timeouts): the page and
    the list its console errors and uncaught exceptions are appended to."""
    sync_api = pytest.importorskip("playwright.sync_api",
                                   reason="the browser test needs the playwright package")
    problems: list[str] = []
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=ARGS,
                                     timeout=60_000)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.set_default_timeout(15_000)
            page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: problems.append(str(e)))
            page.goto(path.resolve().as_uri(), wait_until="load")
            yield page, problems
        finally:
            browser.close()
