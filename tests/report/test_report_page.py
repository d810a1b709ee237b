"""The HTML audit report: self-contained, escaped, and its numbers right."""

from __future__ import annotations

import json
import re
from html import escape

import numpy as np
import pandas as pd
import pytest

from labelaudit._errors import InvalidInputError, InvalidParameterError
from labelaudit.report import render_report, write_report
from labelaudit.report._html import script_json
from labelaudit.report._load import load_source
from labelaudit.report._text import confusion_matrix

PWNED = "<script>window.__pwned=1</script>"


def table_rows(html: str) -> list[str]:
    body = html.split('id="issues-table"', 1)[1].split("</tbody>", 1)[0]
    return re.findall(r"<tr data-f=.*?</tr>", body, flags=re.S)


def test_page_is_one_self_contained_file(tmp_path, make_scan_frame):
    out = write_report(make_scan_frame(), tmp_path / "report.html")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.html"]
    html = out.read_text(encoding="utf-8")
    assert html.startswith("<!DOCTYPE html>") and html.rstrip().endswith("</html>")
    references = re.findall(r'\b(?:src|href)\s*=\s*["\']?([^"\'\s>]+)', html, flags=re.I)
    assert all(not re.match(r"(https?:)?//", ref, flags=re.I) for ref in references)
    assert "<link" not in html and "@import" not in html
    assert not re.search(r"url\(\s*['\"]?(https?:)?//", html)
    assert "default-src 'none'" in html  # the CSP allows no outside source
    assert html.count("<svg") >= 2  # plots are inline SVG


def test_dataset_strings_are_escaped(make_scan_frame):
    frame = make_scan_frame()
    frame.loc[1, "label"] = "</script><b>x</b>"
    frame.loc[2, "id"] = '"><img src=x onerror=alert(1)>'
    html = render_report(frame).html
    assert PWNED not in html and "&lt;script&gt;window.__pwned=1&lt;/script&gt;" in html
    assert "<b>x</b>" not in html and "&lt;/script&gt;&lt;b&gt;x&lt;/b&gt;" in html
    assert "<img src=x" not in html
    # only the page's own two scripts: the JSON data and the code
    assert len(re.findall(r"<script\b", html)) == 2
    data = html.split('id="report-data">', 1)[1].split("</script>", 1)[0]
    assert "<" not in data and "&" not in data
    assert "</script><b>x</b>" in json.loads(data)["classes"]


def test_script_json_round_trips_line_separators():
    text = script_json({"a": "x\u2028y\u2029<&>"})
    assert "\u2028" not in text and "<" not in text
    assert json.loads(text) == {"a": "x\u2028y\u2029<&>"}


def test_top_limits_the_table(make_scan_frame):
    html = render_report(make_scan_frame(), top=5).html
    rows = table_rows(html)
    assert len(rows) == 5
    ranks = [int(re.search(r'data-v="(\d+)"', r)[1]) for r in rows]
    assert ranks == [1, 2, 3, 4, 5]
    with pytest.raises(InvalidParameterError, match="top"):
        render_report(make_scan_frame(), top=0)


def test_confusion_matrix_equals_crosstab():
    frame = pd.DataFrame({
        "id": range(8),
        "label": ["a", "a", "a", "b", "b", "c", "c", "c"],
        "suggested_label": ["b", "c", "b", "a", "c", "a", "a", "b"],
        "given_prob": [0.1, 0.2, 0.9, 0.3, 0.8, 0.2, 0.1, 0.45],
        "suggested_prob": [0.8, 0.7, 0.05, 0.6, 0.1, 0.5, 0.9, 0.45]})
    audit = load_source(frame)
    # the model prefers the suggestion where its probability is higher; on the tie (row
    # 7: c vs b) argmax takes the class that sorts first, b
    off = (frame["suggested_prob"] > frame["given_prob"]) | (frame.index == 7)
    expected = pd.crosstab(frame["label"][off], frame["suggested_label"][off])
    expected = expected.reindex(index=list("abc"), columns=list("abc"), fill_value=0)
    got = confusion_matrix(audit.frame, audit.classes)
    assert got.to_numpy().tolist() == expected.to_numpy().tolist()
    assert audit.accuracy == pytest.approx(2 / 8)


def test_summary_states_the_estimate_and_its_assumptions(make_scan_frame):
    html = render_report(make_scan_frame()).html
    assert "estimated label errors (confident learning)" in html
    assert "class-conditional noise" in html and "out-of-sample" in html
    assert "Σ(1 − p)" not in html and "Poisson-binomial" not in html


def test_chance_level_banner(make_scan_frame):
    weak = make_scan_frame(strength=0.0, classes=("a", "b"))
    strong = make_scan_frame(strength=20.0)
    assert 'id="chance-warning"' in render_report(weak).html
    assert 'id="chance-warning"' not in render_report(strong).html


def test_bad_input_names_the_missing_columns(tmp_path, make_scan_frame):
    frame = make_scan_frame().drop(columns=["label", "given_prob"])
    path = tmp_path / "issues.csv"
    frame.to_csv(path, index=False)
    with pytest.raises(InvalidInputError, match="issues.csv is not a labelaudit scan output: "
                       "missing columns label, given_prob"):
        write_report(path, tmp_path / "report.html")
    assert not (tmp_path / "report.html").exists()
    with pytest.raises(InvalidParameterError, match=r"\.html"):
        write_report(make_scan_frame(), tmp_path / "report.pdf")


def test_many_classes_keep_the_heat_map_readable(make_scan_frame):
    classes = tuple(f"intent-{i:03d}" for i in range(158))
    html = render_report(make_scan_frame(n=2000, classes=classes, strength=1.0)).html
    assert "the 30 of 158 classes with the most confusions" in html
    # the largest confusion of all is in the heat map
    from labelaudit.report._load import load_source as load
    from labelaudit.report._text import top_confused

    audit = load(make_scan_frame(n=2000, classes=classes, strength=1.0))
    matrix = confusion_matrix(audit.frame, audit.classes)
    given, suggested = matrix.stack().idxmax()
    shown = top_confused(matrix, 30)
    assert len(shown) == 30 and given in shown and suggested in shown


def test_datalab_section(make_scan_frame):
    frame = make_scan_frame(n=10)
    frame["is_near_duplicate"] = False
    frame["near_duplicate_id"] = None
    a, b, c = frame.index[:3]
    frame.loc[[a, b, c], "is_near_duplicate"] = True
    frame.loc[a, "near_duplicate_id"] = frame.loc[b, "id"]
    frame.loc[b, "near_duplicate_id"] = frame.loc[a, "id"]
    frame.loc[c, "near_duplicate_id"] = frame.loc[a, "id"]
    frame.loc[b, "label"] = "other"  # a and b disagree; c carries a's label
    frame.loc[c, "label"] = frame.loc[a, "label"]
    frame["is_outlier"] = frame.index == 4
    frame["outlier_score"] = np.linspace(0, 1, len(frame))
    frame["non_iid_p_value"] = 0.001
    report = render_report(frame)
    assert "datalab" in report.sections
    assert '<p id="duplicate-conflicts"><b>1</b> pairs' in report.html
    assert "near-duplicate of " in report.html and '<span class="tag out">' in report.html
    assert "non_iid_p_value" in report.html


def test_large_scan_stays_small(make_scan_frame):
    report = render_report(make_scan_frame(n=20_000, seed=1))
    assert report.n_items == 20_000
    assert len(table_rows(report.html)) == 500
    assert report.n_bytes < 2_000_000


def test_scan_result_source(tmp_path):
    from labelaudit import scan

    rng = np.random.default_rng(0)
    words = {"sport": "match goal team", "food": "pasta sauce cook"}
    rows = [(f"{words[c]} {rng.integers(100)}", c) for c in ["sport", "food"] * 20]
    frame = pd.DataFrame(rows, columns=["text", "label"])
    frame.loc[0, "label"] = "food"
    result = scan(frame, scorers=["tfidf"])
    html = write_report(result, tmp_path / "r.html").read_text(encoding="utf-8")
    assert "estimated label errors (confident learning)" in html
    assert f'<span id="error-estimate">{result.n_issues_estimate:,}</span>' in html
    assert "ensemble weight" in html and ">tfidf<" in html
    assert escape(result.flag_rule) in html and "in-memory" in html
    # read back from the file, the accuracy is the scan's
    path = tmp_path / "issues.csv"
    result.to_frame().to_csv(path, index=False)
    assert load_source(path).accuracy == pytest.approx(result.accuracy)


def test_truth_adds_precision_recall_curves(make_scan_frame):
    frame = make_scan_frame()
    truth = pd.DataFrame({"id": frame["id"], "is_error": frame["rank"] % 7 == 1})
    report = render_report(frame, truth=truth)
    assert "truth" in report.sections
    assert 'id="pr-curves"' in report.html and "(AP " in report.html
    assert 'id="flagged-precision"' in report.html


def test_annotations_add_agreement(make_scan_frame):
    frame = make_scan_frame(n=30)
    rng = np.random.default_rng(0)
    long = pd.DataFrame([(item, f"w{w}", label if rng.random() < 0.8 else "sport")
                         for item, label in zip(frame["id"], frame["label"], strict=True)
                         for w in range(3)], columns=["item", "annotator", "label"])
    report = render_report(frame, annotations=long)
    assert "agreement" in report.sections
    assert "Fleiss&#x27; kappa" in report.html or "Fleiss' kappa" in report.html
    assert 'id="gold-gamma"' in report.html and "γ =" in report.html
    assert "Flags against the annotators" in report.html
