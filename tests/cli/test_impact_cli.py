"""``labelaudit impact`` through the real entry point, on small files."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

IDS = list(range(11))


@pytest.fixture()
def files(tmp_path):
    """The hand-made case of tests/metrics/test_impact.py as files: B = 6, C = 3, U = 2,
    and two models whose corrected order flips at x = 0.25."""
    table = pd.DataFrame({
        "id": IDS,
        "text": [f"text {i}" for i in IDS],
        "label": ["a", "a", "a", "b", "b", "b", "a", "a", "a", "a", "b"],
        "corrected": ["a", "a", "a", "b", "b", "b", "b", "b", "b", "", ""],
        "flagged": [False] * 4 + [True] * 7,
        "verdict": [""] * 4 + ["Non-Error"] * 2 + ["Correctable"] * 3
        + ["Non-Agreement", "Pending"],
    })
    table.to_json(tmp_path / "corrected.jsonl", orient="records", lines=True)
    pd.DataFrame({"id": IDS, "pred": list("aaabbbaaaba")}).to_csv(tmp_path / "big.csv",
                                                                  index=False)
    pd.DataFrame({"id": IDS, "pred": list("aabaaabbbaa")}).to_csv(tmp_path / "small.csv",
                                                                  index=False)
    return tmp_path


def run_cli(*argv, cwd):
    return subprocess.run([sys.executable, "-m", "labelaudit", "impact", *argv], cwd=cwd,
                          capture_output=True, text=True, timeout=300)


MODELS = ("--predictions", "big=big.csv", "--predictions", "small=small.csv")


def test_json_out_and_plot(files):
    done = run_cli("corrected.jsonl", *MODELS, "--out", "impact.json", "--plot-out", "impact.png",
                   cwd=files)
    assert done.returncode == 0, done.stderr
    doc = json.loads((files / "impact.json").read_text())
    assert doc["sizes"] == {"B": 6, "C": 3, "U": 2, "P": 9}
    assert doc["N"] == pytest.approx(1 / 3)
    assert doc["models"]["big"]["rank_corrected"] == 1
    assert doc["flips"] == [{"a": "big", "b": "small", "x": pytest.approx(0.25),
                             "N": pytest.approx(0.4)}]
    assert (files / "impact.png").stat().st_size > 1000
    assert "warning: 1 flagged items have no final verdict" in done.stderr
    assert "wrote impact.json" in done.stderr
    assert done.stdout == ""


def test_table_to_stdout_and_csv(files):
    done = run_cli("corrected.jsonl", *MODELS, "--format", "csv", cwd=files)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    assert lines[0].startswith("model,acc_original,acc_corrected")
    assert len(lines) == 3
    done = run_cli("corrected.jsonl", *MODELS, "--out", "models.csv", "--quiet", cwd=files)
    assert done.returncode == 0 and done.stderr == ""
    frame = pd.read_csv(files / "models.csv")
    np.testing.assert_allclose(frame["acc_corrected"], [6 / 9, 5 / 9])


def one_line_error(done, *fragments):
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    for fragment in fragments:
        assert fragment in lines[0]


def test_ids_do_not_match(files):
    pd.DataFrame({"id": IDS[:8], "pred": list("aaabbbaa")}).to_csv(files / "short.csv",
                                                                   index=False)
    done = run_cli("corrected.jsonl", "--predictions", "short=short.csv", cwd=files)
    one_line_error(done, "'short' do not match the data's ids", "3 ids have no prediction")


def test_label_outside_label_set(files):
    pd.DataFrame({"id": IDS, "pred": list("aaabbbaaabz")}).to_csv(files / "odd.csv",
                                                                  index=False)
    done = run_cli("corrected.jsonl", "--predictions", "odd=odd.csv", cwd=files)
    one_line_error(done, "labels outside the label set", "'z'")


def test_unknown_verdict_and_no_flagged(files):
    table = pd.read_json(files / "corrected.jsonl", lines=True)
    table.assign(verdict=table["verdict"].replace("Non-Error", "Fine")).to_csv(
        files / "odd.csv", index=False)
    one_line_error(run_cli("odd.csv", *MODELS, cwd=files), "['Fine']")
    table.assign(flagged=False).drop(columns="verdict").to_csv(files / "none.csv",
                                                               index=False)
    one_line_error(run_cli("none.csv", *MODELS, cwd=files), "no flagged items")


def test_empty_correctable_set_says_so(files):
    table = pd.read_json(files / "corrected.jsonl", lines=True)
    table["verdict"] = table["verdict"].replace("Correctable", "Non-Error")
    table.to_csv(files / "clean.csv", index=False)
    done = run_cli("clean.csv", *MODELS, "--out", "impact.json", cwd=files)
    assert done.returncode == 0, done.stderr
    assert "C is empty" in done.stderr
    doc = json.loads((files / "impact.json").read_text())
    assert doc["N"] == 0 and doc["flips"] == []


def test_usage_errors(files):
    assert run_cli("corrected.jsonl", "--predictions", "nofile", cwd=files).returncode == 2
    assert run_cli("corrected.jsonl", *MODELS, "--out", "x.pdf", cwd=files).returncode == 2
    neither = run_cli("corrected.jsonl", cwd=files)  # a missing required option
    assert neither.returncode == 2 and neither.stderr.count("\n") == 1
    assert "give --predictions" in neither.stderr
    one_line_error(run_cli("corrected.jsonl", *MODELS, "--out", "big.csv", cwd=files),
                   "big.csv")
    assert (files / "big.csv").read_text().startswith("id,pred")


def test_ladder_with_tfidf_members(tmp_path):
    rng = np.random.default_rng(0)
    words = {"pos": ["good", "great", "fine", "lovely"], "neg": ["bad", "awful", "poor"]}

    def frame(n, start):
        labels = rng.choice(["pos", "neg"], size=n)
        text = [" ".join(rng.choice(words[y], size=3)) for y in labels]
        return pd.DataFrame({"id": np.arange(start, start + n), "text": text,
                             "label": labels})

    frame(60, 0).to_json(tmp_path / "train.jsonl", orient="records", lines=True)
    test = frame(30, 1000)
    test["corrected"] = test["label"]
    test["flagged"] = False
    test.loc[:3, "flagged"] = True
    test.loc[:2, "corrected"] = test.loc[:2, "label"].map({"pos": "neg", "neg": "pos"})
    test.to_csv(tmp_path / "corrected.csv", index=False)
    done = run_cli("corrected.csv", "--train", "train.jsonl", "--text", "text", "--scorers",
                   "tfidf", "--out", "impact.json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    doc = json.loads((tmp_path / "impact.json").read_text())
    assert doc["sizes"] == {"B": 27, "C": 3, "U": 0, "P": 30}
    assert list(doc["models"]) == ["tfidf-C0.01", "tfidf-C0.1", "tfidf-C1", "tfidf-C10",
                                   "tfidf-C100"]
    assert run_cli("corrected.csv", "--train", "train.jsonl", "--text", "text", "--scorers",
                   "bert", cwd=tmp_path).returncode == 2


@pytest.mark.parametrize("out", ["corrected.jsonl", "small.csv"])
def test_never_overwrites_an_input(files, out):
    before = (files / out).read_bytes()
    done = run_cli("corrected.jsonl", *MODELS, "--out", out, cwd=files)
    one_line_error(done, "never overwrites an input")
    assert (files / out).read_bytes() == before
