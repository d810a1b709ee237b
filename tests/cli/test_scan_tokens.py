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

# scan-tokens trains tagging heads (torch networks): `make test-fast` leaves these out
pytestmark = pytest.mark.heavy


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
    code = main(["scan-tokens", str(data), "--model", str(tiny_bert), "--scorers", "encoder",
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
    assert main(["evaluate-tokens", str(out), "--eval", str(truth), "--at-k", "5,10",
                 "--out", str(metrics)]) == 0
    report = json.loads(metrics.read_text())
    assert [x["level"] for x in report["levels"]] == ["token", "sentence", "sentence"]
    assert report["levels"][1]["n_errors"] == len(planted)
    assert "aupr" in capsys.readouterr().out


def test_scan_tokens_score_mode_table_and_csv(files, tiny_bert, tmp_path, capsys):
    data, truth, planted, _ = files
    args = ["scan-tokens", str(truth), "--score", str(data), "--model", str(tiny_bert),
            "--scorers", "encoder", "--head", "crf", "--no-cache"]
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
    assert main(["evaluate-tokens", str(tmp_path / "none.jsonl"), "--eval", str(bad)]) == 1


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


# --- issue #11 field-test findings --------------------------------------------------------

@pytest.mark.parametrize("option", [
    ["--epochs", "-1"], ["--epochs", "0"], ["--show", "-5"], ["--batch-size", "0"],
    ["--folds", "1"], ["--folds", "x"], ["--tag-column", "0"], ["--seed", "-1"],
])
def test_bad_numeric_options_are_usage_errors_before_any_model_loads(files, option, capsys):
    data, *_ = files
    # The model does not exist: an option that got past argparse would fail differently.
    with pytest.raises(SystemExit) as exc:
        main(["scan-tokens", str(data), "--model", "/no/such/model", *option])
    assert exc.value.code == 2
    assert f"argument {option[0]}" in capsys.readouterr().err


@pytest.mark.parametrize("option", [["--at-k", "0,5"], ["--at-k", "ten"], ["--at-k", ","],
                                    ["--tag-column", "0"]])
def test_bad_numeric_options_of_evaluate_tokens_are_usage_errors(files, tmp_path, option,
                                                                 capsys):
    _, truth, *_ = files
    with pytest.raises(SystemExit) as exc:
        main(["evaluate-tokens", str(tmp_path / "issues.jsonl"), "--eval", str(truth), *option])
    assert exc.value.code == 2
    assert f"argument {option[0]}" in capsys.readouterr().err


def test_out_suffix_not_written_in_that_format_is_a_usage_error(files, tmp_path, capsys):
    data, truth, *_ = files
    for out, extra in (("t.xlsx", []), ("t", []), ("t.csv", ["--format", "jsonl"]),
                       ("t.jsonl", ["--format", "table"]), ("t.parquet", ["--format", "table"])):
        with pytest.raises(SystemExit) as exc:
            main(["scan-tokens", str(data), "--model", "/no/such/model",
                  "--out", str(tmp_path / out), *extra])
        assert exc.value.code == 2
        err = capsys.readouterr().err
        assert err.count("error:") == 1 and ("suffix" in err or "does not match" in err)
        assert not (tmp_path / out).exists()
    with pytest.raises(SystemExit) as exc:
        main(["evaluate-tokens", str(tmp_path / "x.jsonl"), "--eval", str(truth),
              "--out", str(tmp_path / "m.xlsx")])
    assert exc.value.code == 2 and "m.xlsx" in capsys.readouterr().err


def test_out_suffix_picks_a_format_that_is_really_written(files, tiny_bert, tmp_path):
    data, truth, *_ = files
    args = ["scan-tokens", str(truth), "--score", str(data), "--model", str(tiny_bert),
            "--scorers", "encoder", "--cache-dir", str(tmp_path / "cache"), "--quiet"]
    assert main(args + ["--out", str(tmp_path / "t.json")]) == 0
    rows = json.loads((tmp_path / "t.json").read_text())
    assert rows and {"id", "kind", "score"} <= set(rows[0])
    assert main(args + ["--out", str(tmp_path / "t.txt"), "--format", "csv"]) == 0
    assert (tmp_path / "t.txt").read_text().startswith("id,rank,sentence_score,kind")
    assert main(args + ["--out", str(tmp_path / "t.txt"), "--show", "2"]) == 0
    assert (tmp_path / "t.txt").read_text().count("\n#") == 1


def test_all_o_training_file_error_says_there_are_no_entities(files, tmp_path, capsys):
    data, *_ = files
    plain = tmp_path / "untagged.conll"
    plain.write_text("".join(line.split("\t")[0] + "\tO\n" if line else "\n"
                             for line in data.read_text().splitlines()))
    assert main(["scan-tokens", str(plain), "--score", str(data),
                 "--model", "/no/such/model"]) == 1
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0
    assert "every tag of the training data is O: there are no entities to learn from" in err
    assert main(["scan-tokens", str(plain), "--model", "/no/such/model"]) == 1
    assert "every tag of the data is O" in capsys.readouterr().err


def test_line_separators_in_tokens_survive_scan_and_evaluate(tiny_bert, tmp_path):
    """U+0085 and U+2028 inside tokens: read whole, written escaped, read back by evaluate."""
    tokens, clean, docs = make_corpus(n_docs=6, per_doc=3)
    noisy, _ = plant_errors(clean)
    tokens[0][0] = tokens[0][0] + "\u0085x"
    tokens[1][1] = tokens[1][1] + "\u2028y"
    data = tmp_path / "odd.conll"
    data.write_text(conll_text(tokens, noisy, docs), encoding="utf-8")
    truth = tmp_path / "truth.conll"
    truth.write_text(conll_text(tokens, clean, docs), encoding="utf-8")
    out = tmp_path / "issues.jsonl"
    assert main(["scan-tokens", str(data), "--model", str(tiny_bert), "--scorers", "encoder",
                 "--folds", "2", "--no-cache", "--quiet", "--out", str(out)]) == 0
    lines = out.read_text(encoding="utf-8").splitlines()  # splits at U+0085 and U+2028 too
    assert len(lines) == len(tokens)
    by_id = {r["id"]: r["tokens"] for r in map(json.loads, lines)}
    assert by_id[0] == tokens[0] and by_id[1] == tokens[1]
    assert main(["evaluate-tokens", str(out), "--eval", str(truth), "--at-k", "3",
                 "--format", "json"]) == 0


def test_progress_warnings_print_after_the_bars(files, tiny_bert, tmp_path, monkeypatch, capsys):
    import warnings

    from labelaudit.cli import _common
    from labelaudit.models import EncoderTokenScorer, FoldWarning

    data, *_ = files
    fit = EncoderTokenScorer.fit

    def fit_and_warn(self, *args, **kwargs):
        warnings.warn("a warning raised while the bars run", FoldWarning, stacklevel=2)
        return fit(self, *args, **kwargs)

    monkeypatch.setattr(_common, "show_progress", lambda args: True)
    monkeypatch.setattr(EncoderTokenScorer, "fit", fit_and_warn)
    assert main(["scan-tokens", str(data), "--model", str(tiny_bert), "--scorers", "encoder",
                 "--folds", "3", "--no-cache", "--out", str(tmp_path / "o.jsonl")]) == 0
    err = capsys.readouterr().err
    assert "encoding 60 sentences" in err and "cross-fitting 3 folds" in err
    assert "Batches" not in err
    warning = err.index("labelaudit: warning: a warning raised while the bars run")
    assert warning > err.rindex("cross-fitting 3 folds") and warning > err.rindex("encoding")
    assert err.count("a warning raised while the bars run") == 1
    assert warning < err.index("labelaudit scan-tokens: 60 sentences")


# --- issue #12: one spelling per idea ------------------------------------------------------

def test_scorers_and_at_k(files, tiny_bert, tmp_path, capsys):
    data, truth, planted, n = files
    out = tmp_path / "issues.jsonl"
    base = ["scan-tokens", str(data), "--model", str(tiny_bert), "--folds", "2", "--no-cache",
            "--quiet"]
    assert main(base + ["--scorers", "encoder", "--out", str(out)]) == 0
    with pytest.raises(SystemExit) as exc:
        main(base + ["--scorers", "encoder,bogus"])
    assert exc.value.code == 2 and "argument --scorers" in capsys.readouterr().err
    capsys.readouterr()
    assert main(["evaluate-tokens", str(out), "--eval", str(truth), "--at-k", "3",
                 "--format", "csv"]) == 0
    assert "p@3" in capsys.readouterr().out
    help_text = subprocess.run([sys.executable, "-m", "labelaudit", "evaluate-tokens", "--help"],
                               capture_output=True, text=True, check=True).stdout
    assert "--at-k" in help_text and "--k " not in help_text
    help_text = subprocess.run([sys.executable, "-m", "labelaudit", "scan-tokens", "--help"],
                               capture_output=True, text=True, check=True).stdout
    assert "--scorers" in help_text and "--scorer " not in help_text


def test_scan_tokens_issue_table_in_any_output_format(files, tiny_bert, tmp_path, capsys):
    data, *_ = files
    args = ["scan-tokens", str(data), "--model", str(tiny_bert), "--scorers", "encoder",
            "--folds", "2", "--no-cache", "--quiet"]
    assert main(args + ["--format", "tsv"]) == 0
    assert capsys.readouterr().out.startswith("id\trank\tsentence_score\tkind")
    assert main(args + ["--out", str(tmp_path / "t.parquet")]) == 0
    assert list(pd.read_parquet(tmp_path / "t.parquet").columns[:2]) == ["id", "rank"]


def test_several_token_scorers_are_averaged(tmp_path, tiny_bert, capsys):
    tokens, clean, docs = make_corpus(n_docs=4, per_doc=4)
    data = tmp_path / "small.jsonl"
    data.write_text("".join(json.dumps({"tokens": t, "tags": g, "doc": d}) + "\n"
                            for t, g, d in zip(tokens, clean, docs, strict=False)))
    out = tmp_path / "both.jsonl"
    assert main(["scan-tokens", str(data), "--model", str(tiny_bert), "--scorers",
                 "encoder,finetune", "--epochs", "1", "--folds", "2", "--no-cache",
                 "--out", str(out)]) == 0
    assert len(out.read_text().splitlines()) == len(tokens)
    assert "scored by encoder+crf(" in capsys.readouterr().err


def test_scoring_the_training_file_itself_is_refused(files, capsys):
    data = files[0]
    before = data.read_bytes()
    assert main(["scan-tokens", str(data), "--score", str(data)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "data and --score are the same file" in err[0]
    assert data.read_bytes() == before
