"""The report in headless Chromium (Debian's ``chromium``, driven by Playwright): it loads
without console errors, filters and sorts its table, draws something, a script in the data
never runs, and a real scan's top item shows its evidence beside its highlighted text."""

from __future__ import annotations

import io
import shutil

import pytest
from tests.browser import ARGS, CHROMIUM, needs_chromium, opened_page

pytestmark = [needs_chromium, pytest.mark.heavy]
playwright_api = pytest.importorskip("playwright.sync_api",
                                     reason="the browser test needs the playwright package")

from labelaudit import scan  # noqa: E402
from labelaudit.report import write_report  # noqa: E402


def _visible_column(page, column: int) -> list[str]:
    return page.evaluate(
        """(column) => Array.from(document.querySelectorAll('#issues-table tbody tr'))
             .filter(r => !r.hidden).map(r => r.cells[column].textContent)""", column)


def _blank(png: bytes) -> bool:
    """True when the screenshot is one colour (pixel variance 0), or tiny without PIL."""
    try:
        from PIL import Image, ImageStat
    except ImportError:  # pragma: no cover - PIL comes with matplotlib
        return len(png) < 20_000
    image = Image.open(io.BytesIO(png)).convert("L")
    return max(ImageStat.Stat(image).var) == 0


def test_report_in_a_browser(tmp_path, make_scan_frame):
    frame = make_scan_frame(n=80)
    frame.loc[1, "text"] = "a long text\n" * 60
    out = write_report(frame, tmp_path / "report.html", top=50)
    food = int((frame.head(50)["label"] == "food").sum())
    executable = str(CHROMIUM if CHROMIUM.exists() else shutil.which("chromium"))
    problems: list[str] = []
    dialogs: list[str] = []
    with playwright_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=executable, headless=True, args=ARGS,
                                     timeout=60_000)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.set_default_timeout(15_000)
            page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: problems.append(str(e)))
            page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
            page.goto(out.resolve().as_uri(), wait_until="load")
            assert page.get_attribute("html", "data-ready") == "1"  # the page's script ran
            assert page.evaluate("typeof window.__pwned") == "undefined"
            assert "window.__pwned=1" in page.inner_text("#issues-table")  # shown as text
            assert page.inner_text(".filters .count") == "50 of 50 rows shown"

            # filter by class: only that class's rows stay
            page.select_option("#class-filter", "food")
            given = _visible_column(page, 3)
            assert given == ["food"] * food
            assert page.inner_text(".filters .count") == f"{food} of 50 rows shown"
            page.select_option("#class-filter", "")
            page.fill("#text-filter", "item 1")
            found = _visible_column(page, 2)
            assert found and all("item 1" in t for t in found)
            page.fill("#text-filter", "")
            assert len(_visible_column(page, 0)) == 50

            # sort by p(suggested): ascending, then descending on a second click
            header = page.locator("#issues-table th", has_text="p(suggested)")
            header.click()
            keys = page.evaluate("""() => Array.from(document.querySelectorAll(
                '#issues-table tbody tr')).map(r => parseFloat(r.cells[6].dataset.v))""")
            assert keys == sorted(keys) and keys != sorted(keys, reverse=True)
            assert header.get_attribute("aria-sort") == "ascending"
            header.click()
            keys = page.evaluate("""() => Array.from(document.querySelectorAll(
                '#issues-table tbody tr')).map(r => parseFloat(r.cells[6].dataset.v))""")
            assert keys == sorted(keys, reverse=True)

            # a long text opens on click
            page.locator("#issues-table details summary").first.click()
            assert page.locator("#issues-table details[open]").count() == 1

            png = page.screenshot(full_page=False)
            assert not _blank(png)
        finally:
            browser.close()
    assert problems == []
    assert dialogs == []


def test_report_shows_evidence_in_a_browser(tmp_path, make_reviews):
    result = scan(make_reviews(), scorers=["tfidf"], progress=False)
    out = result.report(tmp_path / "report.html", top=10)
    with opened_page(out) as (page, problems):
        assert page.get_attribute("html", "data-ready") == "1"
        top = page.locator("#issues-table tbody tr").first
        assert top.locator("td").nth(1).inner_text() == "1"  # the planted error first
        block = top.locator(".evidence")
        assert block.is_visible()
        assert block.locator(".ev-words").inner_text().startswith("toward neg (given pos): ")
        assert top.locator("td.text mark.ev").first.is_visible()
        marks = [m.lower() for m in top.locator("td.text mark.ev").all_inner_texts()]
        assert any("awful" in m or "waste" in m or "boring" in m for m in marks)
        assert "<b>" in top.locator("td.text").inner_text()  # the text's tag shown as text
        duplicate = block.locator(".ev-dup")
        assert duplicate.is_visible()
        assert duplicate.inner_text().startswith("duplicate of #3, labelled neg")
        assert block.locator("ol.ev-nb li").count() == 3
        assert page.locator("#evidence-note").is_visible()
    assert problems == []
