"""Headless Chromium for the browser tests: Debian's ``chromium``, driven by Playwright."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

CHROMIUM = Path(shutil.which("chromium") or "/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]

needs_chromium = pytest.mark.skipif(
    not CHROMIUM.exists(), reason="Debian's chromium is not installed (`make browser` "
    "installs it as root: apt-get install -y chromium)")
