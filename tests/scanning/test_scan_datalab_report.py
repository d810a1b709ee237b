"""scan with cleanlab Datalab's issue types (--datalab) and the HTML report (--report)."""

from __future__ import annotations

import pandas as pd
import pytest
from tests.conftest import make_topic_frame

from labelaudit import scan
from labelaudit.cli import main


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    """Topic texts where item t1 is a verbatim copy of t0 with another label."""
    frame = make_topic_frame(15)
    copy = frame.iloc[[0]].copy()
    copy["id"] = "copy"
    copy["label"] = next(c for c in ("sport", "food", "tech") if c != copy["label"].iloc[0])
    return pd.concat([frame, copy], ignore_index=True)


def test_datalab_columns_join_the_scan_output_by_item(frame):
    result = scan(frame, scorers=["tfidf"], datalab=True)
    out = result.to_frame().set_index("id")
    for column in ("is_near_duplicate", "near_duplicate_id", "near_duplicate_label_conflict",
                   "is_outlier", "outlier_score"):
        assert column in out.columns
    first = frame["id"].iloc[0]
    assert out.loc["copy", "near_duplicate_id"] == first
    assert out.loc[first, "near_duplicate_id"] == "copy"
    assert out.loc["copy", "near_duplicate_label_conflict"]
    assert "datalab: near-duplicates" in result.summary()
    assert "is_near_duplicate" not in scan(frame, scorers=["tfidf"]).to_frame().columns


def test_datalab_features_must_be_known(frame):
    with pytest.raises(ValueError, match="datalab_features"):
        scan(frame, scorers=["tfidf"], datalab=True, datalab_features="bm25")


def test_cli_datalab_and_report(frame, tmp_path, capsys):
    data = tmp_path / "data.csv"
    frame.to_csv(data, index=False)
    out, page = tmp_path / "issues.csv", tmp_path / "report.html"
    assert main(["scan", str(data), "--scorers", "tfidf", "--datalab", "--out", str(out),
                 "--report-out", str(page)]) == 0
    written = pd.read_csv(out)
    assert written.loc[written["id"] == "copy", "near_duplicate_label_conflict"].item()
    html = page.read_text(encoding="utf-8")
    assert "data.csv" in html and "near-duplicate" in html.lower()
    assert 'id="non-iid"' in html and "non_iid_p_value" in written.columns
    assert "wrote" in capsys.readouterr().err


def test_cli_report_needs_an_html_name(frame, tmp_path):
    data = tmp_path / "data.csv"
    frame.to_csv(data, index=False)
    with pytest.raises(SystemExit) as stop:
        main(["scan", str(data), "--scorers", "tfidf", "--report-out", str(tmp_path / "r.txt")])
    assert stop.value.code == 2 and not (tmp_path / "r.txt").exists()


def test_cli_device_list_sets_the_finetune_scorer(frame, tmp_path, capsys):
    data = tmp_path / "data.csv"
    frame.to_csv(data, index=False)
    assert main(["scan", str(data), "--scorers", "tfidf", "--device", "cuda:0,cuda:1"]) == 2
    assert "--device sets the fine-tuning of the finetune scorer" in capsys.readouterr().err
