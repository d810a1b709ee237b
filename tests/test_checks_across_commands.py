"""Checks shared across commands: label columns, ids,
overlapping sets, folds, ignored options, token JSONL keys, probabilities in impact, and
what filter and co-teaching say about the items they drop and the noise rate they use."""

from __future__ import annotations

import json
import os
import re
import shutil
import warnings

import numpy as np
import pandas as pd
import pytest
from tests.conftest import make_topic_frame

os.environ.setdefault("LABELAUDIT_THREADS", "1")  # the test machine is shared

import labelaudit  # noqa: E402
import labelaudit.training  # noqa: E402
from labelaudit._errors import InvalidInputError, InvalidParameterError  # noqa: E402
from labelaudit.cli import main  # noqa: E402
from labelaudit.io import OverlapWarning, check_label_values, warn_overlap  # noqa: E402
from labelaudit.models import make_folds  # noqa: E402
from labelaudit.tokens import read_tokens  # noqa: E402
from labelaudit.training import NOISE_RATE_CAP, FilterWarning, NoiseEstimateWarning  # noqa: E402

MULTI = "column 'label' holds label sets (multi-label)"


def _topics(n_per_class: int, seed: int) -> pd.DataFrame:
    return make_topic_frame(n_per_class, seed=seed).drop(columns=["true_label", "is_error"])


def _random_labels(n: int = 60) -> pd.DataFrame:
    """Texts whose labels no model can predict: the words say nothing of the label."""
    rng = np.random.default_rng(0)
    words = [f"w{i}" for i in range(40)]
    texts = [" ".join(rng.choice(words, size=5)) for _ in range(n)]
    return pd.DataFrame({"text": texts, "label": np.array(["a", "b", "c"])[np.arange(n) % 3]})


@pytest.fixture
def files(tmp_path):
    """A clean training set, a clean test set, and both with lists of labels."""
    train, test = _topics(20, 0), _topics(10, 1)
    for name, frame in (("train", train), ("test", test)):
        frame.to_json(tmp_path / f"{name}.jsonl", orient="records", lines=True)
        frame.assign(label=[[v] for v in frame["label"]]).to_json(
            tmp_path / f"multi_{name}.jsonl", orient="records", lines=True)
    return tmp_path


def _one_line_error(capsys, argv, code=1) -> str:
    assert main([str(a) for a in argv]) == code
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    return err[0]


def _usage_error(capsys, argv) -> str:
    """The last stderr line of a usage error: exit 2, from argparse (SystemExit) or from a
    library check of an option's value (main's return code)."""
    try:
        code = main([str(a) for a in argv])
    except SystemExit as exit_info:
        code = exit_info.code
    assert code == 2
    return capsys.readouterr().err.strip().splitlines()[-1]


# 1. A label column holding lists (multi-label) is refused by every command of one label
# per item (scan, noise and train read it: tests/scanning/test_scan_label_sets.py,
# tests/noise/test_noise_label_sets.py, tests/train/test_train_label_sets.py)


@pytest.mark.parametrize("argv", [
    ["select", "multi_train.jsonl", "--val", "test.jsonl", "--eval", "multi_test.jsonl",
     "--sweep", "2", "--seeds", "1"],
    ["train-bench", "multi_train.jsonl", "--eval", "test.jsonl", "--methods", "base"],
    ["train-bench", "train.jsonl", "--eval", "multi_test.jsonl", "--methods", "base"],
    ["consistency", "train.jsonl", "--suspect", "multi_test.jsonl", "--text", "text"],
])
def test_multi_label_columns_are_refused_in_one_line(files, capsys, argv):
    line = _one_line_error(capsys, [files / a if a.endswith(".jsonl") else a for a in argv])
    assert MULTI in line and "`labelaudit scan` audits label sets" in line
    assert not (files / "model").exists() and not (files / "m.json").exists()


def test_multi_label_is_refused_by_the_streamed_scan_and_impact(files, tmp_path):
    with pytest.raises(InvalidParameterError, match=r"column 'label' holds label sets"):
        labelaudit.scan(files / "multi_train.jsonl", out=tmp_path / "o.csv", scorers=["tfidf"],
                    tfidf="hashing")
    table = pd.DataFrame({"id": [1, 2], "label": [["a"], ["b"]], "corrected": ["a", "b"],
                          "flagged": [True, False]})
    with pytest.raises(InvalidInputError, match=re.escape(MULTI)):
        labelaudit.impact.measure_impact(
            table, {"m": pd.DataFrame({"id": [1, 2], "pred": ["a", "b"]})})


def test_check_label_values_names_rows_and_reads_parquet_arrays(tmp_path):
    frame = pd.DataFrame({"label": [["a", "b"], ["a"], ["b"]]})
    frame.to_parquet(tmp_path / "x.parquet")
    values = pd.read_parquet(tmp_path / "x.parquet")["label"]  # numpy arrays, not lists
    with pytest.raises(InvalidInputError, match=r"rows 'x', 'y', 'z', e\.g\. \['a', 'b'\]"):
        check_label_values(values, column="label", ids=np.array(["x", "y", "z"]))
    with pytest.raises(InvalidInputError, match="holds objects, not labels"):
        check_label_values(pd.Series([{"a": 1}, "b"]), column="label")
    check_label_values(pd.Series(["a", 1.5, None]), column="label")  # other checks' business


# 2. consistency --corrected with duplicate ids names the first one


def test_consistency_corrected_with_duplicate_ids(files, capsys):
    corrected = _topics(10, 1)
    corrected.loc[3, "id"] = corrected.loc[2, "id"]
    corrected.to_json(files / "fixed.jsonl", orient="records", lines=True)
    line = _one_line_error(capsys, ["consistency", files / "train.jsonl", "--suspect",
                                    files / "test.jsonl", "--corrected", files / "fixed.jsonl",
                                    "--text", "text", "--size", "10"])
    assert f"the corrected file has duplicate ids in column 'id': {corrected.loc[2, 'id']!r} " \
           "first (repeated in row 3)" in line


# 3. predict --id with a column that does not exist


def test_predict_with_an_unknown_id_column(files, capsys, tiny_st_dir):
    model = labelaudit.training.train(_topics(5, 0), model=str(tiny_st_dir), epochs=1)
    model.save(files / "model")
    line = _one_line_error(capsys, ["predict", files / "model", files / "test.jsonl",
                                    "--id", "nope"])
    assert "--id 'nope'" in line and "its columns are 'id', 'text', 'label'" in line
    assert main(["predict", str(files / "model"), str(files / "test.jsonl"), "--format",
                 "csv"]) == 0
    assert capsys.readouterr().out.splitlines()[1].startswith("t0,")  # the id column


# 4. a set compared with itself: the same file is refused, the same items warned about


def test_consistency_and_select_refuse_the_same_file(files, capsys):
    line = _one_line_error(capsys, ["consistency", files / "train.jsonl", "--suspect",
                                    files / "." / "train.jsonl", "--text", "text"])
    assert "train and suspect are the same file" in line
    line = _one_line_error(capsys, ["select", files / "train.jsonl", "--val",
                                    files / "train.jsonl", "--eval", files / "test.jsonl"])
    assert "train and val are the same file" in line


def test_consistency_and_select_warn_about_shared_items(files, capsys):
    shutil.copy(files / "train.jsonl", files / "copy.jsonl")
    assert main(["consistency", str(files / "train.jsonl"), "--suspect",
                 str(files / "copy.jsonl"), "--text", "text", "--size", "10", "--repeats", "2",
                 "--points", "3"]) == 0
    assert "warning: 60 of the 60 suspect items (100%) are also in the training set" \
        in capsys.readouterr().err
    assert main(["select", str(files / "train.jsonl"), "--val", str(files / "copy.jsonl"),
                 "--eval", str(files / "test.jsonl"), "--sweep", "2", "--seeds", "1"]) == 0
    assert "warning: 60 of the 60 validation items (100%) are also in the training set" \
        in capsys.readouterr().err


def test_warn_overlap_warns_only_above_the_share():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert warn_overlap(("training", ["a", "b"]), ("suspect", ["a"] + list("cdefghijk")),
                            why="x") == pytest.approx(0.1)
    with pytest.warns(OverlapWarning, match=r"2 of the 4 suspect items \(50%\)"):
        warn_overlap(("training", ["a", "b"]), ("suspect", ["a", "b", "c", "d"]), why="x")


# 5. an explicit --folds above the smallest class is an error; the default is lowered


@pytest.mark.parametrize("extra", [[], ["--out", "issues.csv"]])  # in memory, streamed
def test_scan_folds_above_the_smallest_class(files, capsys, extra):
    line = _one_line_error(capsys, ["scan", files / "train.jsonl", "--scorers", "tfidf",
                                    "--folds", "100000", *[files / e if e.endswith(".csv")
                                                           else e for e in extra]])
    assert "asked for 100000 folds, but the smallest class" in line
    assert "has 20 items (of 60)" in line and "use at most 20 folds" in line


def test_noise_realism_folds_and_the_default_still_lowered(files, capsys):
    noisy = _topics(3, 0).assign(is_noisy=[True, False] * 4 + [False])
    noisy.to_json(files / "noisy.jsonl", orient="records", lines=True)
    line = _one_line_error(capsys, ["noise", "realism", files / "noisy.jsonl", "--scorers",
                                    "tfidf", "--folds", "4"])
    assert "asked for 4 folds, but the smallest class" in line and "has 3 items" in line
    assert main(["noise", "realism", str(files / "noisy.jsonl"), "--scorers", "tfidf"]) == 0
    assert "using 3 folds" in capsys.readouterr().err  # the README's rule for the default
    assert "--folds: used by `noise realism` only" in _usage_error(
        capsys, ["noise", files / "train.jsonl", "--method", "uniform", "--rate", "0.1",
                 "--folds", "3"])


def test_scan_tokens_folds_above_the_documents(tmp_path, capsys):
    path = tmp_path / "sentences.jsonl"  # tags under "labels", as CoNLL-2003 exports have
    path.write_text("".join(json.dumps({"id": i, "doc": i, "tokens": ["Rome", "is"],
                                        "labels": ["B-LOC", "O"]}) + "\n" for i in range(3)))
    line = _one_line_error(capsys, ["scan-tokens", path, "--folds", "100000"])
    assert "3 documents cannot fill 100000 folds" in line


def test_make_folds_exact_and_lowered():
    labels = np.array([0] * 8 + [1] * 3)
    with pytest.warns(UserWarning, match="using 3 folds"):  # the default, 5, is lowered
        assert make_folds(labels).max() == 2
    with pytest.raises(InvalidParameterError, match="smallest class, 1, has 3"):
        make_folds(labels, n_folds=5)  # a number given is taken as asked
    assert make_folds(labels, n_folds=3).max() == 2


# 6. options that would be silently ignored are usage errors


@pytest.mark.parametrize(("argv", "message"), [
    (["scan", "train.jsonl", "--datalab-features", "embed"],
     "--datalab-features sets the features of --datalab: add --datalab"),
    (["scan", "train.jsonl", "--engine", "ray", "--pred-probs", "p.npy", "--out", "o.csv"],
     "--pred-probs replaces labelaudit's models, so --engine cannot be given"),
    (["train", "train.jsonl", "--noise-rate", "0.2", "--out", "m"],
     "--noise-rate is the noise rate of --method co-teaching or cnlcu; --method base"),
    (["train", "train.jsonl", "--filter", "relabel", "--out", "m"], "add --method filter"),
    (["train", "train.jsonl", "--eval", "test.jsonl", "--metrics-out", "m.csv"],
     "--metrics-out m.csv: the metrics are written as JSON"),
])
def test_ignored_options_are_usage_errors(files, capsys, monkeypatch, argv, message):
    np.save(files / "p.npy", np.full((60, 3), 1 / 3))
    monkeypatch.chdir(files)
    assert message in _usage_error(capsys, argv)
    assert not (files / "m").exists() and not (files / "o.csv").exists()


# 7. token JSONL with the tags under "labels"


def test_token_jsonl_reads_labels_and_names_the_keys_looked_for(tmp_path):
    path = tmp_path / "sentences.jsonl"
    rows = [{"id": "dev-0", "doc": 0, "tokens": ["LONDON", "1996-08-30"],
             "labels": ["B-LOC", "O"]}, {"id": "dev-1", "tokens": ["Rome"], "tags": ["B-LOC"]}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    data = read_tokens(path)
    assert data.tags == [["B-LOC", "O"], ["B-LOC"]] and data.ids == ["dev-0", "dev-1"]
    path.write_text(json.dumps({"tokens": ["a"], "ner": ["O"]}) + "\n")
    with pytest.raises(InvalidInputError, match="list of tags under 'tags' or 'labels'; the "
                                                "line has 'tokens', 'ner'"):
        read_tokens(path)


# 8. impact refuses NaN and negative probabilities, naming the file and the first row


@pytest.mark.parametrize(("bad", "what"), [(np.nan, "a missing or infinite probability"),
                                           (-0.3, "a negative probability")])
def test_impact_refuses_bad_probabilities(tmp_path, capsys, bad, what):
    ids = list(range(6))
    pd.DataFrame({"id": ids, "label": list("aaabbb"), "corrected": list("aabbbb"),
                  "flagged": [False, False, True, True, False, False]}).to_csv(
        tmp_path / "corrected.csv", index=False)
    p = np.random.default_rng(0).random(6)
    probs = pd.DataFrame({"id": ids, "a": p, "b": 1 - p})
    probs.loc[[2, 4], "b"] = bad
    probs.to_csv(tmp_path / "probs.csv", index=False)
    line = _one_line_error(capsys, ["impact", tmp_path / "corrected.csv", "--predictions",
                                    f"m={tmp_path / 'probs.csv'}"])
    assert f"predictions 'm' ({tmp_path / 'probs.csv'}): row 2 (0-based; id 2) has {what}" \
        in line and "(1 more rows too)" in line


# 9. and 10. what filter dropped and the noise rate co-teaching used, said and recorded


def test_filter_says_what_it_dropped_and_warns_above_the_noise_share(tiny_st_dir):
    with pytest.warns(FilterWarning, match=r"filter dropped \d+ of 60 items .* more than the "
                                           r"estimated share of wrong labels"):
        model = labelaudit.training.train(_random_labels(), method="filter",
                                          filter_scorers=["tfidf"], model=str(tiny_st_dir),
                                          epochs=1)
    log = model.log
    assert log["dropped"] == log["flagged"] == 60 - log["n_used"]
    assert log["dropped"] > 60 * log["filter_noise_share"] and log["filter_noise_share"] <= 0.5


def test_co_teaching_caps_a_noise_estimate_of_a_weak_model(tiny_st_dir):
    with pytest.warns(NoiseEstimateWarning, match="labels wrong, more than 50%"):
        model = labelaudit.training.train(_random_labels(), method="co-teaching",
                                 model=str(tiny_st_dir), epochs=1)
    assert model.log["noise_rate"] == NOISE_RATE_CAP < model.log["noise_rate_cleanlab"]
    assert model.log["noise_rate_source"].startswith("cleanlab's confident joint")


def test_train_cli_prints_and_records_the_drops_and_the_noise_rate(files, capsys,
                                                                    tiny_st_dir):
    _random_labels().to_json(files / "random.jsonl", orient="records", lines=True)
    common = ["--eval", str(files / "test.jsonl"), "--model", str(tiny_st_dir), "--epochs", "1"]
    assert main(["train", str(files / "random.jsonl"), "--method", "filter",
                 "--metrics-out", str(files / "filter.json"), *common]) == 0
    err = capsys.readouterr().err
    assert re.search(r"filter: dropped \d+ of 60 items \(.*%\): those a cross-fitted scan "
                     r"\(tfidf, embed, out-of-sample accuracy .*\) flags as cleanlab's "
                     r"estimated number of label errors; estimated share of wrong labels", err)
    facts = json.loads((files / "filter.json").read_text())
    assert facts["dropped"] == facts["n_train"] - facts["n_used"]
    assert {"filter_noise_share", "filter_accuracy", "filter_scorers"} <= set(facts)
    assert main(["train", str(files / "random.jsonl"), "--method", "co-teaching",
                 "--metrics-out", str(files / "co.json"), *common]) == 0
    err = capsys.readouterr().err
    assert "noise rate: 0.500 (cleanlab's confident joint" in err and "capped at 0.5" in err
    assert "give --noise-rate RATE" in err
    facts = json.loads((files / "co.json").read_text())
    assert facts["noise_rate"] == 0.5 and "capped" in facts["noise_rate_source"]
