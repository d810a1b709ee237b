"""``labelaudit scan-tokens`` and ``labelaudit evaluate-tokens`` through the real entry point."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

os.environ.setdefault("LABELAUDIT_THREADS", "1")  # the test machine is shared
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tokens"))
from ner_fixtures import build_tiny_bert, conll_text, make_corpus, plant_errors  # noqa: E402

from labelaudit.cli import main  # noqa: E402
from labelaudit.tokens import ISSUE_KINDS  # noqa: E402


@pytest.fixture(scope="module")
def tiny_bert(tmp_path_factory):
    return build_tiny_bert(tmp_path_factory.mktemp("cli-tiny-bert"))


@pytest.fixture
def files(tmp_path):
    tokens, clean, docs = make_corpus(n_docs=12, per_doc=5)
    noisy, planted = plant_errors(clean)
    data = tmp_path / "data.conll"
    data.write_text(conll_text(tokens, noisy, docs))
    truth = tmp_path / "truth.conll"
    truth.write_text(conll_text(tokens, clean, docs))
    return data, truth, planted, len(tokens)


def test_scan_tokens_cross_fitted_then_evaluate(files, tiny_bert, tmp_path, capsys):
    data, truth, planted, n = files
    out = tmp_path / "issues.jsonl"
    code = main(["scan-tokens", str(data), "--model", str(tiny_bert), "--scorer", "encoder",
                 "--folds", "3", "--scheme", "iob2", "--cache-dir", str(tmp_path / "cache"),
                 "--out", str(out)])
    assert code == 0
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(records) == n and [r["rank"] for r in records] == list(range(1, n + 1))
    assert {k for r in records for k in r} >= {"id", "tokens", "tags", "suggested_tags",
                                              "issues", "score", "score_softmin",
                                              "token_scores"}
    assert all(i["kind"] in ISSUE_KINDS for r in records for i in r["issues"])
    invalid = next(r for r in records if r["id"] == planted["invalid-sequence"])
    assert "invalid-sequence" in [i["kind"] for i in invalid["issues"]]
    assert "sentences with issues" in capsys.readouterr().err

    metrics = tmp_path / "metrics.json"
    assert main(["evaluate-tokens", str(out), "--truth", str(truth), "--k", "5,10",
                 "--out", str(metrics)]) == 0
    report = json.loads(metrics.read_text())
    assert [x["level"] for x in report["levels"]] == ["token", "sentence", "sentence"]
    assert report["levels"][1]["n_errors"] == len(planted)
    assert "aupr" in capsys.readouterr().out


def test_scan_tokens_score_mode_table_and_csv(files, tiny_bert, tmp_path, capsys):
    data, truth, planted, _ = files
    args = ["scan-tokens", str(truth), "--score", str(data), "--model", str(tiny_bert),
            "--scorer", "encoder", "--head", "crf", "--no-cache"]
    assert main(args + ["--format", "table", "--show", "3", "--quiet"]) == 0
    captured = capsys.readouterr()
    assert captured.out.startswith("#1  sentence") and captured.out.count("\n#") == 2
    assert captured.err == ""
    out = tmp_path / "issues.csv"
    assert main(args + ["--out", str(out)]) == 0
    frame = pd.read_csv(out)
    assert list(frame.columns[:4]) == ["id", "rank", "sentence_score", "kind"]
    assert frame["score"].is_monotonic_increasing
    assert planted["invalid-sequence"] in set(frame.loc[frame["kind"] == "invalid-sequence", "id"])


def test_scan_tokens_finetune_on_cpu(tmp_path, tiny_bert):
    tokens, clean, docs = make_corpus(n_docs=4, per_doc=4)
    data = tmp_path / "small.jsonl"
    data.write_text("".join(json.dumps({"tokens": t, "tags": g, "doc": d}) + "\n"
                            for t, g, d in zip(tokens, clean, docs, strict=False)))
    out = tmp_path / "ft.jsonl"
    assert main(["scan-tokens", str(data), "--model", str(tiny_bert), "--epochs", "1",
                 "--folds", "2", "--out", str(out), "--quiet"]) == 0
    assert len(out.read_text().splitlines()) == len(tokens)


def test_errors_exit_1_with_one_line(tmp_path, capsys):
    bad = tmp_path / "bad.conll"
    bad.write_text("John B-PER\nruns\n")
    assert main(["scan-tokens", str(bad)]) == 1
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "line 2 has 1" in err
    weird = tmp_path / "weird.conll"
    weird.write_text("John B-PER\nruns Q-X\n")
    assert main(["scan-tokens", str(weird)]) == 1
    assert "line 2: 'Q-X'" in capsys.readouterr().err
    assert main(["evaluate-tokens", str(tmp_path / "none.jsonl"), "--truth", str(bad)]) == 1


def test_usage_errors_and_help():
    with pytest.raises(SystemExit) as exc:
        main(["scan-tokens", "x.conll", "--format", "xml"])
    assert exc.value.code == 2
    done = subprocess.run([sys.executable, "-m", "labelaudit", "--help"], capture_output=True,
                          text=True, check=True)
    assert "scan-tokens" in done.stdout and "evaluate-tokens" in done.stdout
    done = subprocess.run([sys.executable, "-m", "labelaudit", "scan-tokens", "--help"],
                          capture_output=True, text=True, check=True)
    assert "--tag-column" in done.stdout and "--score" in done.stdout
