"""The report of a multi-label scan: summary, per-class counts, known errors at item and
class level, the top issues with their sets; from the result, its CSV or JSONL, the CLI and
scan --report-out; and in headless Chromium without errors."""

from __future__ import annotations

import re
import shutil

import pandas as pd
import pytest
from tests.scanning.test_scan_label_sets import make_sets

import labelaudit
from labelaudit.cli import main
from labelaudit.report import render_report, write_report


@pytest.fixture(scope="module")
def result():
    return labelaudit.scan(make_sets(), label="topics", top=2, progress=False)


def _truth(result) -> pd.DataFrame:
    sets = {str(i): [str(c) for c in result.classes[row.astype(bool)]]
            for i, row in zip(result.ids, result.label_sets, strict=True)}
    sets["p0"], sets["p1"] = ["sport"], ["food", "tech"]  # the planted errors, corrected
    return pd.DataFrame({"id": list(sets), "true_label": list(sets.values())})


def test_report_of_a_multi_label_scan(result, tmp_path):
    report = render_report(result, truth=_truth(result), true_label="true_label")
    assert report.kind == "label sets" and report.n_items == 150 and report.n_flagged == 2
    assert report.sections == ("summary", "classes", "truth", "issues")
    html = report.html
    assert "multi-label classification" in html and "suggested set differs" in html
    # the classes table: flagged p1 lacks tech (missing), flagged p0 has food wrongly (extra)
    def counts(name: str) -> list[int]:
        row = re.search(rf"<tr><td>{name}</td>(.*?)</tr>", html).group(1)
        return [int(v.replace(",", "")) for v in re.findall(r">([\d,]+)</td>", row)]

    given = result.label_sets.sum(axis=0).tolist()
    assert counts("tech")[0] == given[2] and counts("tech")[4] == 1  # flagged: missing
    assert counts("food")[0] == given[0] and counts("food")[5] == 1  # flagged: extra
    truth_part = html[html.index('id="truth"'):html.index('id="issues"')]
    assert "Per class" in truth_part and ">all<" in truth_part
    issues_part = html[html.index('id="issues"'):]
    first = re.search(r"<tbody><tr>(.*?)</tr>", issues_part).group(1)
    assert ">p0<" in first or ">p1<" in first
    assert "worst_class" in issues_part  # the column the items are ranked by
    result.write(tmp_path / "issues.csv")
    from_csv = render_report(tmp_path / "issues.csv")
    assert from_csv.kind == "label sets" and from_csv.n_flagged == 2


def test_cli_report_and_scan_report_out(result, tmp_path, capsys):
    result.write(tmp_path / "issues.jsonl")
    assert main(["report", str(tmp_path / "issues.jsonl"), "--out",
                 str(tmp_path / "r.html")]) == 0
    assert (tmp_path / "r.html").stat().st_size > 5_000
    make_sets().to_json(tmp_path / "posts.jsonl", orient="records", lines=True)
    assert main(["scan", str(tmp_path / "posts.jsonl"), "--label", "topics", "--out",
                 str(tmp_path / "i.csv"), "--report-out", str(tmp_path / "s.html"),
                 "--quiet"]) == 0
    assert "Top issues" in (tmp_path / "s.html").read_text()


@pytest.mark.heavy
def test_the_multi_label_report_in_a_browser(result, tmp_path):
    from tests.browser import ARGS, CHROMIUM

    playwright_api = pytest.importorskip("playwright.sync_api")
    if not CHROMIUM.exists():
        pytest.skip("Debian's chromium is not installed")
    out = write_report(result, tmp_path / "report.html")
    problems: list[str] = []
    with playwright_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM or shutil.which("chromium")),
                                     headless=True, args=ARGS, timeout=60_000)
        try:
            page = browser.new_page()
            page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: problems.append(str(e)))
            page.goto(out.resolve().as_uri(), wait_until="load")
            assert page.get_attribute("html", "data-ready") == "1"
            page.click("#classes th:nth-child(2)")  # sort the classes by "given"
            cells = page.eval_on_selector_all("#classes tbody tr td:nth-child(2)",
                                              "tds => tds.map(t => t.textContent)")
            assert len(cells) == 3
        finally:
            browser.close()
    assert problems == []
