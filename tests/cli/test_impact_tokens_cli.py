"""``labelaudit impact`` on token data (--original) through the real entry point."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

# the hand-made case of tests/metrics/test_impact_tokens.py, as CoNLL files
TOKENS = [["Ann"], ["Bob"], ["Rome"], ["ran"], ["Cal"], ["Acme"], ["Dee"]]
ORIGINAL = ["B-PER", "B-PER", "B-LOC", "O", "B-PER", "B-LOC", "O"]
FIXED = ORIGINAL[:5] + ["B-ORG", "B-PER"]
M1 = ["B-PER", "B-PER", "B-LOC", "O", "B-PER", "B-LOC", "O"]
M2 = ["B-PER", "O", "O", "O", "O", "B-ORG", "B-PER"]


def conll(tags, tokens=TOKENS):
    return "".join(f"{sent[0]}\t{tag}\n\n" for sent, tag in zip(tokens, tags, strict=True))


@pytest.fixture()
def files(tmp_path):
    for name, tags in (("dev.conll", ORIGINAL), ("dev.fixed.conll", FIXED), ("m1.conll", M1),
                       ("m2.conll", M2)):
        (tmp_path / name).write_text(conll(tags), encoding="utf-8")
    return tmp_path


def run_cli(*argv, cwd):
    return subprocess.run([sys.executable, "-m", "labelaudit", "impact", *argv], cwd=cwd,
                          capture_output=True, text=True, timeout=300)


MODELS = ("--predictions", "m1=m1.conll", "--predictions", "m2=m2.conll")


def test_token_impact_json_and_plot(files):
    done = run_cli("dev.fixed.conll", "--original", "dev.conll", *MODELS, "--out", "i.json",
                   "--plot-out", "i.png", cwd=files)
    assert done.returncode == 0, done.stderr
    doc = json.loads((files / "i.json").read_text())
    assert doc["metric"] == "entity_f1" and doc["unit"] == "sentences"
    assert doc["sizes"] == {"B": 5, "C": 2, "U": 0, "P": 7}
    assert doc["models"]["m1"]["acc_corrected"] == pytest.approx(8 / 11)
    assert doc["models"]["m2"]["acc_C"] == pytest.approx(1.0)
    assert [(f["a"], f["b"]) for f in doc["flips"]] == [("m1", "m2")]
    assert (files / "i.png").stat().st_size > 1000
    assert "score: entity F1" in done.stderr


def test_token_table_to_stdout(files):
    done = run_cli("dev.fixed.conll", "--original", "dev.conll", *MODELS, "--format", "csv",
                   "--quiet", cwd=files)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0].startswith("model,acc_original,acc_corrected")


@pytest.mark.parametrize(("argv", "message"), [
    (("dev.fixed.conll", *MODELS), "looks like a tagged (CoNLL) file: give its original"),
    (("dev.fixed.conll", "--original", "dev.conll", "--label", "x", *MODELS),
     "--label go with tables"),
    (("dev.fixed.conll", "--original", "dev.conll", "--train", "dev.conll", "--scorers",
      "tfidf"), "--scorers tfidf does not go with token data"),
    (("dev.fixed.conll", "--original", "dev.conll", "--predictions", "m=short.conll"),
     "have 6 sentences, the data 7"),
    # the name is checked before anything else (an input is no plot either)
    (("dev.fixed.conll", "--original", "dev.conll", *MODELS, "--plot-out", "dev.conll"),
     "dev.conll: cannot plot to .conll"),
])
def test_token_bad_input(files, argv, message):
    (files / "short.conll").write_text(conll(M1[:6], TOKENS[:6]), encoding="utf-8")
    done = run_cli(*argv, cwd=files)
    assert done.returncode != 0
    assert message in done.stderr
    assert "Traceback" not in done.stderr
