"""Every result shows itself in a notebook as one escaped HTML table (``_repr_html_``):
flagged rows first, then in rank order, at most 50 rows with a note of the rest."""

from __future__ import annotations

import dataclasses
import re

import numpy as np
import pandas as pd
import pytest
from tests.conftest import make_topic_frame

from labelaudit import evaluate, scan
from labelaudit._html_table import MAX_COLUMNS, MAX_ROWS, frame_html, result_html
from labelaudit.agreement import aggregate
from labelaudit.evaluation import detection_report, precision_recall_curve
from labelaudit.io import ResultFiles
from labelaudit.noise import inject_label_set_noise
from labelaudit.report import render_report
from labelaudit.review import apply_verdicts_file
from labelaudit.scanning import LabelSetScanResult, ScanResult, StreamScanResult, TokenScanResult
from labelaudit.training import TrainMetrics

SCRIPT = "<script>alert(1)</script>"


def body_rows(page: str) -> list[tuple[bool, list[str]]]:
    """Each body row of the (first) table: whether it is shaded, and its cells' text."""
    body = page[page.index("<tbody>"):page.index("</tbody>")]
    return [(shade == ' class="f"', re.findall(r"<t[dh] [^>]*>(.*?)</t[dh]>", cells))
            for shade, cells in re.findall(r"<tr( class=\"f\")?>(.*?)</tr>", body)]


def header_cells(page: str) -> list[str]:
    head = page[page.index("<thead>"):page.index("</thead>")]
    return re.findall(r"<th [^>]*>(.*?)</th>", head)


@pytest.fixture(scope="module")
def scanned() -> ScanResult:
    frame = make_topic_frame(20, n_errors=6)
    frame.loc[0, "text"] = f"{frame.loc[0, 'text']} {SCRIPT}"
    result = scan(frame[["id", "text", "label"]], scorers=["tfidf"], progress=False)
    assert isinstance(result, ScanResult)
    return result


def test_scan_result_shows_flagged_items_first_then_by_rank(scanned):
    # flag two items far down the ranking: they lead the table, the rest follows by rank
    order = scanned.order
    flagged = np.zeros(len(order), dtype=bool)
    flagged[order[[6, 2]]] = True
    result = dataclasses.replace(scanned, flagged=flagged)
    rows = body_rows(result._repr_html_())
    rank = header_cells(result._repr_html_()).index("rank")
    ranks = [int(cells[rank]) for _, cells in rows]
    assert ranks[:2] == [3, 7]
    assert ranks[2:] == sorted(ranks[2:])
    assert [shaded for shaded, _ in rows[:3]] == [True, True, False]


def test_scan_result_header_names_the_summary_facts(scanned):
    page = scanned._repr_html_()
    n_flagged = int(scanned.flagged.sum())
    assert "<strong>ScanResult</strong>" in page
    assert f"60 items, 3 classes; flagged {n_flagged} " in page
    assert f"out-of-sample accuracy {scanned.accuracy:.3f}" in page
    # the columns a person reads first (to_table's); the note names every other one
    shown = header_cells(page)
    assert shown == list(scanned.to_table(1).columns)
    others = [c for c in scanned.to_frame().columns if c not in shown]
    assert f"{len(others)} more columns not shown: {', '.join(others)}" in page


def test_text_is_escaped_everywhere(scanned):
    page = scanned._repr_html_()
    assert "<script" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    frame = pd.DataFrame({"<b>col</b>": [f'say "{SCRIPT}"'], "flagged": [True]},
                         index=pd.Index(["<i>x</i>"], name="id"))
    page = frame_html(frame, title="<T>", header="a & b")
    assert "<script" not in page and "<b>" not in page and "<i>" not in page
    assert "&lt;b&gt;col&lt;/b&gt;" in page and "&lt;i&gt;x&lt;/i&gt;" in page
    assert "&lt;T&gt;" in page and "a &amp; b" in page


def test_the_table_is_capped_with_a_note_of_the_rest():
    frame = pd.DataFrame({"rank": np.arange(1, 121), "flagged": np.arange(120) >= 110})
    page = frame_html(frame)
    rows = body_rows(page)
    assert len(rows) == MAX_ROWS
    assert [cells[0] for _, cells in rows[:11]] == [str(r) for r in range(111, 121)] + ["1"]
    assert "70 more rows not shown (120 in all" in page
    assert len(body_rows(frame_html(frame, max_rows=5))) == 5
    assert "more rows" not in frame_html(frame.head(3))


def test_wide_tables_name_the_columns_left_out():
    frame = pd.DataFrame({f"c{i}": [i] for i in range(MAX_COLUMNS + 2)})
    page = frame_html(frame)
    assert len(header_cells(page)) == MAX_COLUMNS
    assert f"2 more columns not shown: c{MAX_COLUMNS}, c{MAX_COLUMNS + 1}" in page


def test_columns_can_be_chosen_and_long_text_gets_room():
    frame = pd.DataFrame({"a": [1], "b": ["x" * 60], "c": ["short"]})
    page = frame_html(frame, columns=["b", "a", "missing"])
    assert header_cells(page) == ["b", "a"]
    assert "1 more column not shown: c" in page
    assert '<td class="w">' in page and '<td class="n">1</td>' in page


def test_values_read_as_a_person_writes_them():
    frame = pd.DataFrame({"p": [0.123456789, float("nan")], "n": [1200, 3],
                          "ok": [True, False], "label": [None, "a"]})
    rows = body_rows(frame_html(frame))
    assert rows[0][1] == ["0.1235", "1200", "True", ""]
    assert rows[1][1] == ["", "3", "False", "a"]
    # numbers right-aligned, text left
    assert '<th class="n">p</th>' in frame_html(frame)
    assert '<th class="t">label</th>' in frame_html(frame)


def test_a_long_cell_is_cut_with_its_whole_text_in_the_tooltip():
    text = "word " * 100
    page = frame_html(pd.DataFrame({"text": [text]}))
    assert "…" in page and f'title="{text}"' in page


def test_results_of_every_command_show_their_summary_and_table(scanned, tmp_path):
    truth = make_topic_frame(20, n_errors=6)[["id", "is_error"]]
    evaluation = evaluate(scanned.to_frame(readable=True), truth)
    page = evaluation._repr_html_()
    assert "<strong>EvaluationResult</strong>: evaluated 60 items: 6 known errors" in page
    methods = [cells[0] for _, cells in body_rows(page)]
    assert methods == evaluation.to_frame()["method"].tolist()
    # every ResultFiles result has it (the mixin's), a scan's own overrides it
    assert isinstance(evaluation, ResultFiles)
    assert ScanResult._repr_html_ is not ResultFiles._repr_html_


def test_a_result_without_a_table_shows_its_fields():
    sets = np.zeros((20, 3), dtype=np.int8)
    sets[:, 0] = 1
    noised = inject_label_set_noise(sets, np.array(["a", "b", "c"]), rate=0.1)
    page = noised._repr_html_()
    assert "LabelSetNoiseResult" in page and "n_noisy" in header_cells(page)


def test_other_results_show_tables(tmp_path):
    is_error = np.array([1, 0, 1, 0, 0, 0])
    scores = np.array([0.1, 0.5, 0.2, 0.9, 0.3, 0.8])
    assert "aupr" in header_cells(detection_report(is_error, scores)._repr_html_())
    assert "precision" in header_cells(precision_recall_curve(is_error, scores)._repr_html_())
    metrics = TrainMetrics(top1=0.9, top5=1.0, macro_f1=0.8, n_eval=10, unseen_labels=(),
                           n_unseen=0)
    assert "top1" in header_cells(metrics._repr_html_())
    annotations = pd.DataFrame({"item_id": [1, 1, 2, 2], "annotator_id": ["a", "b"] * 2,
                                "label": ["x", "x", "y", SCRIPT]})
    page = aggregate(annotations)._repr_html_()
    assert "<script" not in page and "majority" in page


def test_applied_verdicts_show_the_changed_rows_first(tmp_path):
    data = pd.DataFrame({"id": [1, 2, 3, 4], "text": ["w", "x", "y", "z"],
                         "label": ["a", "a", "b", "b"]})
    verdicts = pd.DataFrame({"id": [2, 3], "verdict": ["Non-Error", "Correctable"],
                             "majority_label": ["a", "a"], "votes": ["a:3", "a:3"]})
    data.to_csv(tmp_path / "data.csv", index=False)
    verdicts.to_csv(tmp_path / "verdicts.csv", index=False)
    applied = apply_verdicts_file(tmp_path / "data.csv", tmp_path / "verdicts.csv",
                                  tmp_path / "fixed.csv")
    page = applied._repr_html_()
    assert "1 relabelled, 0 flagged, 0 dropped, 1 confirmed, 4 rows" in page
    assert [cells[0] for _, cells in body_rows(page)] == ["3", "2", "1", "4"]


def test_the_report_shows_in_a_sandboxed_frame(scanned):
    report = render_report(scanned)
    page = report._repr_html_()
    assert page.startswith("<iframe srcdoc=") and 'sandbox="allow-scripts"' in page
    # the whole page is inside the attribute: no tag of it (its script included) is live
    assert page.count("<") == 2 and page.count(">") == 2  # <iframe ...></iframe>
    assert "&lt;script" in page


def test_every_public_result_class_has_its_own_table():
    classes = [ScanResult, LabelSetScanResult, StreamScanResult, TokenScanResult,
               ResultFiles, TrainMetrics, type(detection_report([1, 0], [0.1, 0.2]))]
    assert all(callable(getattr(c, "_repr_html_", None)) for c in classes)


def test_result_html_takes_the_summary_first_line_as_header():
    class Found:
        def to_frame(self):
            return pd.DataFrame({"id": ["a"]})

        def summary(self):
            return "first line\nsecond line"

    page = result_html(Found())
    assert "<strong>Found</strong>: first line</div>" in page
    assert "<pre" in page and "second line" in page
