"""A token scan's report shows each flagged span's evidence beside it: how often its text
carries each tag and the sentences where it carries the suggested one."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from tests.browser import needs_chromium, opened_page

from labelaudit.report import render_report, write_report
from labelaudit.scanning import scan_tokens
from labelaudit.tokens import make_token_dataset, token_classes

TOKENS = [["Rome", "beat", "<b>x</b>"], ["In", "Rome", "<i>today</i>"], ["Rome", "lost"],
          ["all", "quiet"]]
TAGS = [["B-ORG", "O", "O"], ["O", "B-LOC", "O"], ["B-LOC", "O"], ["O", "O"]]


def _result(*, evidence: bool = True):
    ds = make_token_dataset(TOKENS, TAGS)
    classes = token_classes(ds)
    index = {c: i for i, c in enumerate(classes)}
    probs = []
    for i, tags in enumerate(ds.iob2_tags):
        p = np.full((len(tags), len(classes)), 0.01)
        p[np.arange(len(tags)), [index[t] for t in tags]] = 0.9
        if i == 0:  # the model reads the first Rome as a place
            p[0] = 0.01
            p[0, index["B-LOC"]] = 0.9
        probs.append(p / p.sum(axis=1, keepdims=True))
    return scan_tokens(ds, pred_probs=probs, classes=classes, evidence=evidence)


def test_records_show_evidence_beside_the_span_escaped():
    html = render_report(_result()).html
    assert "“Rome” is tagged LOC 2, ORG 1 in the data" in html
    assert '#1 <span class="snip">In <mark class="ev">Rome</mark> &lt;i&gt;today' in html
    assert "<i>today" not in html  # a token is text, never markup


def test_a_scan_without_evidence_shows_none():
    assert 'class="evidence"' not in render_report(_result(evidence=False)).html


def test_an_issue_table_shows_its_evidence_column(tmp_path):
    _result().write(tmp_path / "issues.csv")
    table = pd.read_csv(tmp_path / "issues.csv")
    assert table["evidence"].str.startswith('"Rome": LOC 2, ORG 1 | like LOC: ').all()
    html = render_report(tmp_path / "issues.csv").html
    assert "<th" in html and ">evidence<" in html
    assert "&quot;Rome&quot;: LOC 2, ORG 1 | like LOC: #" in html
    old = table.drop(columns="evidence")  # a scan written before evidence existed
    old.to_csv(tmp_path / "old.csv", index=False)
    assert ">evidence<" not in render_report(tmp_path / "old.csv").html


@needs_chromium
@pytest.mark.heavy
def test_token_evidence_in_a_browser(tmp_path):
    out = write_report(_result(), tmp_path / "report.html")
    with opened_page(out) as (page, problems):
        top = page.locator("#issues-table tbody tr").first
        block = top.locator(".evidence").first
        assert block.is_visible()
        assert block.inner_text().startswith("why “Rome” is tagged LOC 2, ORG 1")
        assert block.locator("ol.ev-nb li").count() == 2
        assert block.locator("mark.ev").first.inner_text() == "Rome"
        assert "<i>today</i>" in block.inner_text()  # shown as text
    assert problems == []
