"""Scan's input and output: JSON lines with Unicode line breaks, id columns, warnings that
reach the user, refused ids and weights, one-line errors, file modes and score columns."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from tests.conftest import make_topic_frame

from labelaudit import InvalidInputError, InvalidParameterError, scan
from labelaudit.io import read_table, write_table


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "labelaudit", *map(str, args)],
                          capture_output=True, text=True, timeout=300)


def _topic_rows(n_per_class=8, n_errors=2):
    return make_topic_frame(n_per_class, n_errors=n_errors).drop(
        columns=["true_label", "is_error"])


# 1. JSON lines with U+0085, U+2028, U+2029 inside strings


@pytest.mark.parametrize("char", ["\u0085", "\u2028", "\u2029"])
def test_jsonl_with_unicode_line_breaks_in_strings(tmp_path, char):
    frame = _topic_rows()
    frame["text"] = frame["text"] + f" and{char}more"
    path = tmp_path / "reviews.jsonl"
    with open(path, "w", encoding="utf-8", newline="") as handle:
        for i, record in enumerate(frame.to_dict("records")):
            # ensure_ascii=False keeps the character raw, as real exports do; CRLF on some
            handle.write(json.dumps(record, ensure_ascii=False) + ("\r\n" if i % 2 else "\n"))
    read = read_table(path)
    assert len(read) == len(frame)
    assert read["text"].tolist() == frame["text"].tolist()
    out = tmp_path / "issues.csv"
    proc = run_cli("scan", path, "--scorers", "tfidf", "--out", out, "-q")
    assert proc.returncode == 0, proc.stderr
    assert len(pd.read_csv(out)) == len(frame)


# 2. an existing id column is used; generated ids never reuse an input's name


def test_scan_uses_an_id_column_when_present(tmp_path):
    frame = _topic_rows()
    frame["id"] = [f"doc-{i}" for i in range(len(frame))][::-1]
    result = scan(frame, scorers=["tfidf"])
    assert sorted(result.ids.tolist()) == sorted(frame["id"])
    assert set(result.to_frame()["id"]) == set(frame["id"])


def test_scan_without_an_id_column_numbers_rows():
    frame = _topic_rows().drop(columns=["id"])
    result = scan(frame, scorers=["tfidf"])
    assert result.ids.tolist() == list(range(len(frame)))


def test_scan_then_evaluate_joins_the_right_items(tmp_path):
    """The failure in the field: scan wrote row numbers as `id`, evaluate joined wrongly."""
    frame = make_topic_frame(10, n_errors=3)
    frame["id"] = np.arange(100, 100 + len(frame))[::-1]  # ids unlike row numbers
    data = tmp_path / "data.csv"
    frame.drop(columns=["true_label", "is_error"]).to_csv(data, index=False)
    truth = tmp_path / "truth.csv"
    frame[["id", "is_error"]].to_csv(truth, index=False)
    issues = tmp_path / "issues.csv"
    assert run_cli("scan", data, "--scorers", "tfidf", "--out", issues, "-q").returncode == 0
    proc = run_cli("evaluate", issues, "--eval", truth, "--is-error", "is_error",
                   "--out", tmp_path / "m.json", "-q")
    assert proc.returncode == 0, proc.stderr
    joined = pd.read_csv(issues).merge(frame[["id", "text"]], on="id", suffixes=("", "_in"))
    assert (joined["text"] == joined["text_in"]).all()


# 3. cleanlab must not silence warnings; the chance-level warning reaches users


def test_warnings_still_shown_after_a_scan():
    # a fresh interpreter: cleanlab's import-time filter is installed only once a process
    code = (
        "import warnings, numpy as np, pandas as pd\n"
        "from labelaudit import scan\n"
        "rng = np.random.default_rng(0)\n"
        "words = np.array(['match', 'soup', 'code', 'goal', 'bake', 'chip'])\n"
        "frame = pd.DataFrame({'text': [' '.join(rng.choice(words, 4)) for _ in range(60)],\n"
        "                      'label': rng.choice(['a', 'b'], size=60, p=[0.7, 0.3])})\n"
        "scan(frame, scorers=['tfidf'], progress=False)\n"
        "warnings.warn('the user s own warning', stacklevel=1)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "ChanceLevelWarning" in proc.stderr  # labelaudit's warning reaches the user
    assert "the user s own warning" in proc.stderr  # and so do the user's own afterwards


def test_chance_level_warning_before_the_summary(tmp_path):
    rng = np.random.default_rng(0)
    words = np.array(["match", "soup", "code", "goal", "bake", "chip", "team", "cook"])
    frame = pd.DataFrame({  # labels unrelated to the texts: nothing to learn
        "text": [" ".join(rng.choice(words, 4)) for _ in range(60)],
        "label": rng.choice(["a", "b", "c"], size=60, p=[0.6, 0.2, 0.2])})
    path = tmp_path / "random.csv"
    frame.to_csv(path, index=False)
    proc = run_cli("scan", path, "--scorers", "tfidf", "--out", tmp_path / "o.csv")
    assert proc.returncode == 0, proc.stderr
    assert "warning:" in proc.stderr and "most common class" in proc.stderr
    assert proc.stderr.index("warning:") < proc.stderr.index("items:")
    # the summary explains the flags next to the count
    assert "near chance level" in proc.stderr


# 4. mixed id types


def test_mixed_id_types_refused(tmp_path):
    path = tmp_path / "mixed.jsonl"
    rows = _topic_rows().to_dict("records")
    for i, row in enumerate(rows):
        row["id"] = i if i % 2 else str(i)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(InvalidInputError, match="mixes id types"):
        scan(path, scorers=["tfidf"])
    proc = run_cli("scan", path, "--scorers", "tfidf", "-q")
    assert proc.returncode == 1 and "mixes id types" in proc.stderr
    assert "Traceback" not in proc.stderr


# 5. --weights with one scorer


@pytest.mark.parametrize("weights", ["equal", "1"])
def test_weights_with_one_scorer_refused(tmp_path, weights):
    path = tmp_path / "d.csv"
    _topic_rows().to_csv(path, index=False)
    proc = run_cli("scan", path, "--scorers", "tfidf", "--weights", weights, "-q")
    assert proc.returncode == 2  # a bad option value: a usage error
    assert "at least two scorers" in proc.stderr and "Traceback" not in proc.stderr


def test_weights_count_must_match_scorers():
    with pytest.raises(InvalidParameterError, match="one weight per scorer"):
        scan(_topic_rows(), scorers=["tfidf", "embed"], weights=[1.0])


# tracebacks and misleading messages


def test_json_array_of_numbers_is_one_line_error(tmp_path):
    path = tmp_path / "numbers.json"
    path.write_text("[1, 2, 3]")
    with pytest.raises(InvalidInputError, match="element 0 of the JSON array is a int"):
        read_table(path)
    proc = run_cli("scan", path, "-q")
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_output_under_a_file_refused_before_work(tmp_path):
    (tmp_path / "news.csv").write_text("x\n")
    # the data file does not exist: if the scan ran first, the error would be about it
    proc = run_cli("scan", tmp_path / "missing.csv", "--out", tmp_path / "news.csv" / "x.csv")
    assert proc.returncode == 1
    assert "is a file, not a folder" in proc.stderr and "missing.csv" not in proc.stderr


def test_ids_printed_plainly(tmp_path):
    path = tmp_path / "dup.jsonl"
    rows = _topic_rows().to_dict("records")
    for i, row in enumerate(rows):
        row["id"] = 68 if i < 2 else 1000 + i
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    proc = run_cli("scan", path, "-q")
    assert proc.returncode == 1
    assert "duplicate ids 68 " in proc.stderr and "np.int64" not in proc.stderr


def test_classlabel_columns_use_names(tmp_path):
    datasets = pytest.importorskip("datasets")
    frame = _topic_rows()
    names = sorted(frame["label"].unique())
    features = datasets.Features({
        "id": datasets.Value("string"), "text": datasets.Value("string"),
        "label": datasets.ClassLabel(names=names)})
    ds = datasets.Dataset.from_dict(
        {"id": frame["id"].tolist(), "text": frame["text"].tolist(),
         "label": [names.index(v) for v in frame["label"]]}, features=features)
    ds.save_to_disk(str(tmp_path / "hf"))
    read = read_table(tmp_path / "hf")
    assert read["label"].tolist() == frame["label"].tolist()
    result = scan(tmp_path / "hf", scorers=["tfidf"])
    assert set(result.to_frame()["label"]) <= set(names)


def test_output_files_follow_the_umask(tmp_path):
    old = os.umask(0o022)
    try:
        out = write_table(pd.DataFrame({"a": [1]}), tmp_path / "x.csv")
        assert out.stat().st_mode & 0o777 == 0o644
        os.umask(0o027)
        out = write_table(pd.DataFrame({"a": [1]}), tmp_path / "y.jsonl")
        assert out.stat().st_mode & 0o777 == 0o640
    finally:
        os.umask(old)


# output a user can act on


def test_score_columns_say_what_they_are():
    frame = scan(_topic_rows(), scorers=["tfidf"]).to_frame()
    assert "score_loss_tfidf" in frame.columns and "score_loss" not in frame.columns
    assert "score_self_confidence" not in frame.columns  # same ranking as score_ensemble
    asked = scan(_topic_rows(), scorers=["tfidf"], methods=["self_confidence", "ensemble"])
    ranked = asked.to_frame()
    assert {"score_self_confidence", "score_ensemble"} <= set(ranked.columns)
    np.testing.assert_array_equal(
        np.argsort(asked.scores["self_confidence"], kind="stable"),
        np.argsort(asked.scores["ensemble"], kind="stable"))


def test_scan_progress_is_on_off_the_terminal_too(monkeypatch):
    from labelaudit.models import default_progress

    assert default_progress() is True  # pytest captures stderr: plain lines there
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True, raising=False)
    assert default_progress() is True


def test_encoding_bar_is_named(tiny_st_dir, tmp_path, capsys):
    from labelaudit.models import encode_texts

    encode_texts(["a match", "the soup", "code"], model=str(tiny_st_dir), cache_dir=False,
                 progress=True)
    err = capsys.readouterr().err
    assert "encoding 3 texts" in err and "Batches" not in err
