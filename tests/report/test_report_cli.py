"""``labelaudit report`` through the real entry point, and token-scan reports."""

from __future__ import annotations

import json
import re

import pandas as pd
import pytest

from labelaudit.cli import main
from labelaudit.report import render_report


def test_report_writes_the_page(tmp_path, scan_csv, capsys):
    out = tmp_path / "report.html"
    assert main(["report", str(scan_csv), "--out", str(out), "--top", "10",
                 "--title", "My <audit>"]) == 0
    err = capsys.readouterr().err.strip()
    assert re.fullmatch(rf"wrote {re.escape(str(out))} \(\d+ KB\): 60 items, 6 flagged", err)
    html = out.read_text(encoding="utf-8")
    assert "<title>My &lt;audit&gt;</title>" in html
    assert html.count("<tr data-f=") == 10


def test_report_quiet_prints_nothing(tmp_path, scan_csv, capsys):
    assert main(["report", str(scan_csv), "--out", str(tmp_path / "r.html"), "--quiet"]) == 0
    assert capsys.readouterr().err == ""


def test_bad_input_is_one_line_and_writes_nothing(tmp_path, make_scan_frame, capsys):
    path = tmp_path / "issues.csv"
    make_scan_frame().drop(columns=["label", "given_prob"]).to_csv(path, index=False)
    out = tmp_path / "report.html"
    assert main(["report", str(path), "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert err == ("labelaudit report: error: issues.csv is not a labelaudit scan output: "
                   "missing columns label, given_prob (give the file written by `labelaudit "
                   "scan --out` or `labelaudit scan-tokens --out`)\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["issues.csv"]


def test_out_must_be_html(tmp_path, scan_csv, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["report", str(scan_csv), "--out", str(tmp_path / "report.csv")])
    assert exit_info.value.code == 2
    assert ".html" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["report", str(scan_csv)])  # --out is required


def test_truth_options_as_evaluate(tmp_path, scan_csv, make_scan_frame):
    frame = make_scan_frame()
    truth = pd.DataFrame({"item": frame["id"], "gold": frame["label"]})
    truth.loc[frame["rank"] <= 3, "gold"] = "sport"
    truth.loc[frame["rank"] == 10, "gold"] = None  # unverified
    path = tmp_path / "truth.csv"
    truth.to_csv(path, index=False)
    out = tmp_path / "r.html"
    assert main(["report", str(scan_csv), "--out", str(out), "--eval", str(path),
                 "--id", "item", "--true-label", "gold", "--unknown", "exclude", "-q"]) == 1
    # the scan output's id column is "id": --id names both files' column, as in evaluate
    truth.rename(columns={"item": "id"}).to_csv(path, index=False)
    assert main(["report", str(scan_csv), "--out", str(out), "--eval", str(path),
                 "--true-label", "gold", "--unknown", "exclude", "-q"]) == 0
    html = out.read_text(encoding="utf-8")
    assert 'id="pr-curves"' in html and "(AP " in html


def test_truth_blanks_need_unknown(tmp_path, scan_csv, make_scan_frame, capsys):
    frame = make_scan_frame()
    truth = pd.DataFrame({"id": frame["id"], "is_error": frame["rank"] <= 3}).astype(object)
    truth.loc[5, "is_error"] = None
    path = tmp_path / "truth.csv"
    truth.to_csv(path, index=False)
    assert main(["report", str(scan_csv), "--out", str(tmp_path / "r.html"),
                 "--eval", str(path)]) == 1
    assert "--unknown exclude" in capsys.readouterr().err
    assert not (tmp_path / "r.html").exists()


def test_annotations_file(tmp_path, scan_csv, make_scan_frame):
    frame = make_scan_frame()
    nested = pd.DataFrame({"id": frame["id"], "annotator_labels": [
        [{"worker": f"w{w}", "label": label if (i + w) % 4 else "tech"} for w in range(3)]
        for i, label in enumerate(frame["label"])]})
    path = tmp_path / "crowd.jsonl"
    nested.to_json(path, orient="records", lines=True)
    out = tmp_path / "r.html"
    assert main(["report", str(scan_csv), "--out", str(out), "--annotations-file", str(path),
                 "-q"]) == 0
    html = out.read_text(encoding="utf-8")
    assert 'id="agreement"' in html and "Krippendorff" in html and 'id="gold-gamma"' in html
    assert "60 of the 60 scanned items have annotations" in html


def test_token_records_report(tmp_path, tokens_jsonl, capsys):
    out = tmp_path / "tokens.html"
    assert main(["report", str(tokens_jsonl), "--out", str(out)]) == 0
    assert capsys.readouterr().err.strip().endswith(": 3 sentences, 2 with issues")
    html = out.read_text(encoding="utf-8")
    assert 'id="issue-types"' in html and "wrong-type" in html and "wrong-boundary" in html
    assert "&lt;script&gt;x&lt;/script&gt;" in html and "<script>x</script>" not in html
    # the given ORG and the suggested LOC span, both marked on the issue
    assert '<mark class="ent e1 issue" title="ORG">Rome<sub>ORG</sub></mark>' in html
    assert '<mark class="ent e0 issue" title="LOC">Rome<sub>LOC</sub></mark>' in html
    assert html.count("<tr data-f=") == 3


def test_token_issue_table_report(tmp_path, records):
    from labelaudit.tokens import issues_to_frame

    path = tmp_path / "issues.csv"
    issues_to_frame(records).to_csv(path, index=False)
    report = render_report(path)
    assert report.kind == "tokens" and report.n_flagged == 2
    assert "Top issues" in report.html and "wrong-boundary" in report.html


def test_token_truth(tmp_path, tokens_jsonl, records):
    truth = tmp_path / "clean.jsonl"
    truth.write_text("".join(json.dumps({
        "id": r["id"], "doc": r["doc"], "tokens": r["tokens"],
        "tags": r["suggested_tags"] if r["id"] == "s0" else r["tags"]}) + "\n"
        for r in records), encoding="utf-8")
    report = render_report(tokens_jsonl, truth=truth)
    assert "truth" in report.sections
    assert "3 sentences, 8 tokens compared with clean.jsonl" in report.html


def test_token_report_from_scan_result_records(records):
    html = render_report(pd.DataFrame(records)).html
    assert json.loads(html.split('id="report-data">', 1)[1].split("</script>")[0])[
        "issue_kinds"] == {"wrong-type": 1, "wrong-boundary": 1}
