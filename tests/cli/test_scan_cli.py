import hashlib
import subprocess
import sys

import pandas as pd
import pytest
from tests.conftest import make_topic_frame

from labelaudit.cli import main


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "labelaudit", *map(str, args)],
                          capture_output=True, text=True, timeout=300)


@pytest.fixture
def data_file(tmp_path):
    path = tmp_path / "reviews.csv"
    make_topic_frame(12, n_errors=3).drop(columns=["true_label", "is_error"]).to_csv(
        path, index=False)
    return path


def test_scan_writes_csv_through_the_real_entry_point(data_file, tmp_path):
    before = hashlib.sha256(data_file.read_bytes()).hexdigest()
    out = tmp_path / "issues.csv"
    proc = run_cli("scan", data_file, "--text", "text", "--label", "label", "--id", "id",
                   "--scorers", "tfidf", "--out", out)
    assert proc.returncode == 0, proc.stderr
    frame = pd.read_csv(out)
    assert len(frame) == 36 and frame["rank"].iloc[0] == 1
    assert "estimated label errors" in proc.stderr and "out-of-sample accuracy" in proc.stderr
    assert hashlib.sha256(data_file.read_bytes()).hexdigest() == before  # input untouched


@pytest.mark.parametrize("suffix", [".jsonl", ".parquet"])
def test_output_format_follows_suffix(data_file, tmp_path, suffix):
    out = tmp_path / f"issues{suffix}"
    assert main(["scan", str(data_file), "--scorers", "tfidf", "--out", str(out), "-q"]) == 0
    frame = pd.read_json(out, lines=True) if suffix == ".jsonl" else pd.read_parquet(out)
    assert {"id", "label", "suggested_label", "loss", "rank", "flagged"} <= set(frame.columns)


def test_pairs_and_score_split(tmp_path):
    train = make_topic_frame(10, seed=1)
    test = make_topic_frame(4, seed=2, n_errors=2)
    for frame in (train, test):
        frame["hypothesis"] = frame["text"].str.split().str[0]
    train.to_json(tmp_path / "train.jsonl", orient="records", lines=True)
    test.to_json(tmp_path / "test.jsonl", orient="records", lines=True)
    out = tmp_path / "test_issues.csv"
    code = main(["scan", str(tmp_path / "train.jsonl"), "--score", str(tmp_path / "test.jsonl"),
                 "--text", "text", "--text-pair", "hypothesis", "--id", "id",
                 "--scorers", "tfidf", "--out", str(out), "-q"])
    assert code == 0
    frame = pd.read_csv(out)
    assert len(frame) == len(test) and "text_pair" in frame.columns


def test_table_to_stdout(data_file):
    proc = run_cli("scan", data_file, "--scorers", "tfidf", "--show", "5", "-q")
    assert proc.returncode == 0
    lines = proc.stdout.strip().splitlines()
    assert lines[0].split()[:4] == ["rank", "id", "label", "suggested_label"]
    assert len(lines) == 6


def test_bad_input_is_one_line_exit_1(tmp_path):
    path = tmp_path / "bad.csv"
    path.write_text("text,label\nhello,a\n,b\nworld,a\n")
    proc = run_cli("scan", path, "--scorers", "tfidf")
    assert proc.returncode == 1
    assert proc.stderr.strip().count("\n") == 0
    assert "empty or missing text in row 1" in proc.stderr and "Traceback" not in proc.stderr


def test_missing_column_and_usage_errors(data_file):
    proc = run_cli("scan", data_file, "--label", "gold")
    assert proc.returncode == 1 and "missing column 'gold'" in proc.stderr
    assert run_cli("scan", data_file, "--top", "3", "--threshold", "0.2").returncode == 2
    assert run_cli("scan").returncode == 2


def test_single_item_class_refused_small_class_warns(tmp_path):
    frame = make_topic_frame(6)
    frame.loc[0, "label"] = "rare"
    frame.to_csv(tmp_path / "rare.csv", index=False)
    proc = run_cli("scan", tmp_path / "rare.csv", "--scorers", "tfidf")
    assert proc.returncode == 1 and "single item" in proc.stderr
    frame.loc[1, "label"] = "rare"
    frame.loc[2, "label"] = "rare"
    frame.to_csv(tmp_path / "small.csv", index=False)
    proc = run_cli("scan", tmp_path / "small.csv", "--scorers", "tfidf", "--out",
                   tmp_path / "o.csv")
    assert proc.returncode == 0 and "warning" in proc.stderr and "using 3 folds" in proc.stderr


def test_help_lists_scan():
    proc = run_cli("--help")
    assert proc.returncode == 0 and "scan" in proc.stdout


def test_cli_names_match_the_library():
    from labelaudit.cli import build_parser
    from labelaudit.detect import RANKING_METHODS as METHODS
    from labelaudit.models import SCORERS

    args = build_parser("scan").parse_args(["scan", "x.csv", "--scorers", ",".join(SCORERS),
                                      "--methods", ",".join(METHODS)])
    assert args.scorers == list(SCORERS) and args.methods == list(METHODS)


@pytest.mark.parametrize("flags", [
    ["--folds", "1"], ["--seeds", "0"], ["--scorers", "bm25"], ["--methods", "loss,nope"],
    ["--rank-by", "nope"], ["--threshold", "1.5"], ["--top", "-2"], ["--out", "x.xlsx"],
])
def test_bad_options_are_usage_errors_caught_before_any_work(data_file, flags, capsys):
    with pytest.raises(SystemExit) as stop:
        main(["scan", str(data_file), *flags])
    assert stop.value.code == 2
    assert "error:" in capsys.readouterr().err


def test_annotations_flag_adds_crowdlab(tmp_path):
    frame = make_topic_frame(8, n_errors=2)
    frame["votes"] = [[t, t, t] for t in frame["true_label"]]
    frame.to_json(tmp_path / "crowd.jsonl", orient="records", lines=True)
    out = tmp_path / "issues.csv"
    assert main(["scan", str(tmp_path / "crowd.jsonl"), "--id", "id", "--scorers", "tfidf",
                 "--annotations", "votes", "--out", str(out), "-q"]) == 0
    issues = pd.read_csv(out)
    assert {"score_crowdlab", "consensus_label"} <= set(issues.columns)
    errors = set(frame.loc[frame["is_error"], "id"])
    assert set(issues.head(2)["id"]) == errors
    proc = run_cli("scan", tmp_path / "crowd.jsonl", "--rank-by", "crowdlab", "--scorers", "tfidf")
    assert proc.returncode == 2 and "needs several annotators" in proc.stderr  # usage error


def test_evidence_in_the_csv_and_off_with_no_evidence(data_file, tmp_path, capsys):
    out = tmp_path / "issues.csv"
    assert main(["scan", str(data_file), "--scorers", "tfidf", "--top", "3", "--out",
                 str(out), "-q"]) == 0
    frame = pd.read_csv(out)
    assert frame["evidence"][:3].str.contains(r"^toward \w+: .+ \| like \w+: #\w+").all()
    assert frame["evidence"][3:].isna().all()
    bare = tmp_path / "bare.csv"
    assert main(["scan", str(data_file), "--scorers", "tfidf", "--no-evidence", "--out",
                 str(bare), "-q"]) == 0
    assert "evidence" not in pd.read_csv(bare).columns


def test_given_probabilities_give_evidence_without_words(data_file, tmp_path, capsys):
    labels = pd.read_csv(data_file)["label"]
    classes = sorted(labels.unique())
    probs = pd.DataFrame({c: (labels == c).astype(float) * 0.8 + 0.2 / len(classes)
                          for c in classes})
    probs.loc[0] = [1 / len(classes)] * len(classes)
    probs.to_csv(tmp_path / "probs.csv", index=False)
    out = tmp_path / "issues.jsonl"
    assert main(["scan", str(data_file), "--pred-probs", str(tmp_path / "probs.csv"),
                 "--top", "2", "--out", str(out)]) == 0
    assert "evidence: neighbours and duplicates only, no words" in capsys.readouterr().err
    first = pd.read_json(out, lines=True)["evidence"][0]
    assert first["words"] == [] and first["neighbours"]
    assert main(["scan", str(data_file), "--pred-probs", str(tmp_path / "probs.csv"),
                 "--no-evidence", "--out", str(tmp_path / "bare.jsonl"), "-q"]) == 0
