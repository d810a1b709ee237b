"""The report shows why each item is flagged: its evidence words highlighted in its text and
a compact block (toward label: words, the nearest items with that label, a conflicting
duplicate), from a scan table, JSONL, Parquet and CSV alike, and nothing where a scan has no
evidence."""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest

from labelaudit._errors import InvalidInputError
from labelaudit.cli import main
from labelaudit.report import render_report, write_report
from labelaudit.report._load import check_scan_table

PWNED = "<script>window.__pwned=1</script>"


def evidence(**changes) -> dict:
    """The top item's evidence, as a scan writes it to JSONL."""
    value = {
        "toward": "neg", "against": "pos",
        "words": [{"term": "waste of time", "weight": 0.83, "side": "text"},
                  {"term": "awful", "weight": 0.41, "side": "text"},
                  {"term": "dull", "weight": 0.2, "side": "text_pair"}],
        "words_from": "tfidf",
        "neighbours": [{"id": 17, "label": "neg", "similarity": 0.41,
                        "snippet": "a dull <i>film</i>"},
                       {"id": 230, "label": "neg", "similarity": 0.39, "snippet": "boring"},
                       {"id": 5, "label": "neg", "similarity": 0.38, "snippet": "meh"}],
        "duplicate_of": [{"id": 9, "label": "pos", "similarity": 1.0}]}
    value.update(changes)
    return value


def scan_table(cell=None, *, pair: bool = False) -> pd.DataFrame:
    """Three items, the first flagged with evidence ``cell``, the others without."""
    frame = pd.DataFrame({
        "id": [1, 2, 3],
        "text": ["What a WASTE of\n time, awful. Not awfully bad.", "great fun", "fine"],
        "label": ["pos", "pos", "neg"], "suggested_label": ["neg", "neg", "pos"],
        "suggested_prob": [0.9, 0.3, 0.2], "given_prob": [0.1, 0.7, 0.8],
        "rank": [1, 2, 3], "flagged": [True, False, False],
        "evidence": [evidence() if cell is None else cell, None, None]})
    if pair:
        frame.insert(2, "text_pair", ["so dull and awful", "ok", "ok"])
    return frame


def top_row(html: str) -> str:
    body = html.split('id="issues-table"', 1)[1].split("</tbody>", 1)[0]
    return re.findall(r"<tr data-f=.*?</tr>", body, flags=re.S)[0]


def marked(html: str) -> list[str]:
    return re.findall(r'<mark class="ev"[^>]*>(.*?)</mark>', html, flags=re.S)


def text_cell(row: str) -> str:
    return re.search(r'<td class="text">(.*?)</td>', row, flags=re.S)[1]


def test_words_are_highlighted_in_the_text_as_whole_words_and_phrases():
    row = top_row(render_report(scan_table()).html)
    text = text_cell(row)
    # the phrase across a line break, whatever its case; "awful" but not "awfully"; in the
    # folded preview (white space flattened) and in the full text behind it
    assert marked(text) == ["WASTE of time", "awful", "WASTE of\n time", "awful"]
    assert "awfully" in text


def test_the_block_shows_words_neighbours_and_a_conflicting_duplicate():
    html = render_report(scan_table()).html
    row = top_row(html)
    block = re.search(r'<div class="evidence">.*?</div></td>', row, flags=re.S)[0]
    words = re.search(r'<div class="ev-words">(.*?)</div>', block, flags=re.S)[1]
    assert re.sub(r"<[^>]+>", "", words).startswith("toward neg (given pos): waste of time, ")
    assert marked(words) == ["waste of time", "awful", "dull"]
    neighbours = re.findall(r"<li>(.*?)</li>", block, flags=re.S)
    assert [re.sub(r"<[^>]+>", "", n) for n in neighbours][0] == (
        "#17 neg 0.41 a dull &lt;i&gt;film&lt;/i&gt;")
    assert len(neighbours) == 3
    duplicate = re.search(r'<div class="ev-dup" role="note">(.*?)</div>', block, flags=re.S)[1]
    assert duplicate.startswith("duplicate of #9, labelled pos")
    assert '<b id="evidence-duplicates">1</b> of the 1 items with evidence' in html
    assert "evidence" in re.search(r"<thead>.*?</thead>", html.split('id="issues-table"')[1],
                                   flags=re.S)[0]


def test_pair_side_words_are_highlighted_in_the_pair_only():
    row = top_row(render_report(scan_table(pair=True)).html)
    text = text_cell(row)
    first, pair = text.split('<span class="pair">', 1)
    assert marked(first) == ["WASTE of time", "awful", "WASTE of\n time", "awful"]
    assert marked(pair) == ["dull"]  # "awful" of the pair is a text-side word: not marked


def test_every_string_of_the_evidence_is_escaped():
    cell = evidence(toward=PWNED, words=[{"term": "<b>x</b>", "weight": 1.0}],
                    neighbours=[{"id": '"><img src=x onerror=alert(1)>', "label": "<i>",
                                 "similarity": 0.5, "snippet": PWNED}],
                    duplicate_of=[{"id": "<u>9</u>", "label": "<s>pos</s>",
                                   "similarity": 1.0}])
    frame = scan_table(cell)
    frame.loc[0, "text"] = f"{PWNED} <b>x</b> here"
    html = render_report(frame).html
    assert PWNED not in html and "<img src=x" not in html
    assert "<b>x</b>" not in html and "<u>9</u>" not in html and "<s>pos</s>" not in html
    assert len(re.findall(r"<script\b", html)) == 2  # the page's own two
    # the term's words b, x, b as a phrase, found between the text's escaped brackets
    assert marked(text_cell(top_row(html))) == ["b&gt;x&lt;/b"]


def test_without_evidence_the_report_is_as_before(make_scan_frame):
    plain = make_scan_frame()
    before = render_report(plain).html
    for frame in (plain, plain.assign(evidence=None), plain.assign(evidence=np.nan)):
        html = render_report(frame).html
        assert html == before
        assert 'class="evidence"' not in html and "<mark" not in html
        assert "evidence-note" not in html


def test_items_without_evidence_get_an_empty_cell():
    html = render_report(scan_table()).html
    body = html.split('id="issues-table"', 1)[1].split("</tbody>", 1)[0]
    rows = re.findall(r"<tr data-f=.*?</tr>", body, flags=re.S)
    assert [row.count('class="evidence"') for row in rows] == [1, 0, 0]
    assert all('<td class="why"></td>' in row for row in rows[1:])


def test_jsonl_parquet_and_result_frames_give_the_same_table(tmp_path):
    frame = scan_table(pair=True)
    expected = top_row(render_report(frame).html)
    jsonl = tmp_path / "scan.jsonl"
    jsonl.write_text("".join(json.dumps(r) + "\n" for r in frame.to_dict(orient="records")),
                     encoding="utf-8")
    parquet = tmp_path / "scan.parquet"
    frame.to_parquet(parquet)
    from_parquet = pd.read_parquet(parquet)["evidence"].iloc[0]
    assert isinstance(from_parquet["words"], np.ndarray)  # lists come back as arrays
    for path in (jsonl, parquet):
        assert top_row(render_report(path).html) == expected


def test_a_csv_cell_is_shown_as_text_with_its_words_highlighted(tmp_path):
    readable = ("toward neg: waste of time, awful, dull (pair) | like neg: #17 (0.41), "
                "#230 (0.39) | duplicate of #9 (pos)")
    frame = scan_table(pair=True)
    frame["evidence"] = [readable, None, None]
    path = tmp_path / "scan.csv"
    frame.to_csv(path, index=False)
    html = write_report(path, tmp_path / "r.html").read_text(encoding="utf-8")
    row = top_row(html)
    text = text_cell(row)
    first, pair = text.split('<span class="pair">', 1)
    assert marked(first) == ["WASTE of time", "awful", "WASTE of\n time", "awful"]
    assert marked(pair) == ["dull"]
    block = re.search(r'<div class="evidence">.*?</div></td>', row, flags=re.S)[0]
    assert "like neg: #17 (0.41), #230 (0.39)" in block
    assert '<div class="ev-dup">duplicate of #9 (pos)</div>' in block
    assert '<b id="evidence-duplicates">1</b>' in html


def test_a_cell_of_json_text_reads_as_its_object(tmp_path):
    frame = scan_table()
    expected = top_row(render_report(frame).html)
    frame["evidence"] = [json.dumps(evidence()), "", None]
    path = tmp_path / "scan.csv"
    frame.to_csv(path, index=False)
    assert top_row(render_report(path).html) == expected


def test_evidence_without_words_shows_its_neighbours():
    # --pred-probs: no member to explain, so no words; duplicates and neighbours stay
    html = render_report(scan_table(evidence(words=[], words_from=None))).html
    row = top_row(html)
    assert "<mark" not in row
    assert "toward <b" in row and row.count("<li>") == 3 and "duplicate of #9" in row


@pytest.mark.parametrize(("cell", "found"), [
    (["bad"], "has ['bad'] (expected an object"),
    ({"words": []}, "has an object without 'toward'"),
    ("{not json", "has text that is not JSON"),
    ({"toward": "neg", "words": "bad"}, "'words' is a str (expected a list)"),
    ({"toward": "neg", "words": [{"term": "x", "side": "left"}]}, "side 'left'"),
])
def test_a_damaged_evidence_cell_is_refused_naming_column_and_row(cell, found):
    frame = scan_table()
    frame["evidence"] = [None, cell, None]
    with pytest.raises(InvalidInputError) as error:
        check_scan_table(frame, "scan.jsonl")
    message = str(error.value)
    assert "\n" not in message
    assert message.startswith("scan.jsonl: column 'evidence' must hold")
    assert "row 2 (id 2)" in message and found in message
    assert message.endswith("re-run `labelaudit scan --out` rather than editing its output")


def test_tables_with_and_without_evidence_pass_the_check(make_scan_frame):
    plain = make_scan_frame()
    for frame in (plain, plain.assign(evidence=None), scan_table()):
        checked = check_scan_table(frame, "scan.jsonl")
        assert list(checked.columns) == list(frame.columns)


def test_a_real_scan_csv_gives_a_report_with_evidence(tmp_path, make_reviews):
    data, scanned, out = tmp_path / "reviews.csv", tmp_path / "scan.csv", tmp_path / "r.html"
    make_reviews().to_csv(data, index=False)
    assert main(["scan", str(data), "--scorers", "tfidf", "--quiet", "--out", str(scanned)]) == 0
    assert main(["report", str(scanned), "--out", str(out), "--quiet"]) == 0
    row = top_row(out.read_text(encoding="utf-8"))
    assert re.search(r'<td>1</td>', row)  # the planted error is the top item
    assert marked(text_cell(row)) and '<div class="evidence">' in row
    assert '<div class="ev-dup">duplicate of #3 (neg)</div>' in row


def test_the_cli_refuses_a_damaged_evidence_cell_in_one_line(tmp_path, capsys):
    frame = scan_table()
    frame["evidence"] = [None, "{oops", None]
    path, out = tmp_path / "scan.csv", tmp_path / "r.html"
    frame.to_csv(path, index=False)
    assert main(["report", str(path), "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "column 'evidence'" in err and "row 2 (id 2)" in err
    assert not out.exists()
