"""train-bench measures on an evaluation set of its own: the training file given again is
refused, a large overlap warned about; and its closing lines say why a Spearman
correlation is undefined instead of printing nan."""

from __future__ import annotations

import os

import pandas as pd
import pytest
from tests.conftest import make_topic_frame

os.environ.setdefault("LABELAUDIT_THREADS", "1")  # the test machine is shared

from labelaudit._errors import InvalidParameterError  # noqa: E402
from labelaudit.cli import main  # noqa: E402
from labelaudit.io import OverlapWarning  # noqa: E402
from labelaudit.training import BenchResult, train_bench  # noqa: E402


def _topics(n: int, seed: int) -> pd.DataFrame:
    return make_topic_frame(n, seed=seed).drop(columns=["true_label", "is_error"])


def test_the_training_file_as_eval_is_refused(tmp_path, capsys):
    _topics(6, 0).to_csv(tmp_path / "train.csv", index=False)
    assert main(["train-bench", str(tmp_path / "train.csv"), "--eval",
                 str(tmp_path / "train.csv"), "--methods", "base"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert "train and eval are the same file" in err[0]
    assert "so eval needs items of its own" in err[0]
    with pytest.raises(InvalidParameterError, match="same file"):
        train_bench(tmp_path / "train.csv", str(tmp_path / "train.csv"), methods=["base"])


def test_an_eval_set_mostly_of_training_items_is_warned_about(tiny_st_dir):
    train = _topics(6, 0)
    held = pd.concat([train.iloc[:6], _topics(2, 1)], ignore_index=True)
    with pytest.warns(OverlapWarning, match=r"6 of the 12 evaluation items \(50%\) are also "
                                            "in the training set"):
        train_bench(train, held, noise=["uniform:0.1"], methods=["base"], seeds=1,
                    model=str(tiny_st_dir), train_options={"epochs": 1})


def _result(methods: dict[str, tuple[float, float]]) -> BenchResult:
    runs = pd.DataFrame([{"method": m, "noise": "uniform", "rate": 0.2, "seed": 0,
                          "top1": clean, "top5": 1.0, "macro_f1": clean,
                          "noisy_top1": noisy, "seconds": 1.0}
                         for m, (clean, noisy) in methods.items()])
    return BenchResult(runs, "head", 10, 10)


@pytest.mark.parametrize(("methods", "why"), [
    ({"base": (0.8, 0.7), "seal": (0.85, 0.75)}, "n/a: 2 methods, it needs 3 or more"),
    ({"base": (0.8, 0.7), "seal": (0.85, 0.7), "mixup": (0.9, 0.7)},
     "n/a: every method has the same noisy accuracy"),
])
def test_spearman_says_why_it_is_undefined(methods, why):
    text = _result(methods).recommendation()
    assert f"Spearman of noisy and clean accuracy {why})" in text and "nan" not in text


def test_spearman_is_printed_when_defined():
    text = _result({"base": (0.8, 0.7), "seal": (0.85, 0.75),
                    "mixup": (0.9, 0.8)}).recommendation()
    assert "Spearman of noisy and clean accuracy 1.00)" in text
