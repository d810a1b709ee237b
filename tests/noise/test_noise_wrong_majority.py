"""Noise that gives a class's items one wrong label at least as often as their own is
warned about: a model trained on it learns the wrong label. Uniform noise over K classes
gets there from rate (K - 1) / K (checked on the rate, not on the draw); a noise matrix
that sends a class's flips to one class gets there below (checked on the counts)."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest

from labelaudit.cli import main
from labelaudit.noise import NoiseRateWarning, inject_noise


def _labels(k: int, n_per_class: int = 50) -> np.ndarray:
    return np.repeat(np.array(list("abcde")[:k]), n_per_class)


def _majority_warnings(caught) -> list[str]:
    return [str(w.message) for w in caught if issubclass(w.category, NoiseRateWarning)
            and "a wrong label is at least as" in str(w.message)]


def _noise(labels, **options) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        inject_noise(labels, **options)
    return _majority_warnings(caught)


def test_uniform_noise_above_half_on_two_classes_warns():
    found = _noise(_labels(2), method="uniform", rate=0.6)
    assert found == ["uniform noise at rate 0.6 over 2 classes keeps each class's own label "
                     "on 40% of its items and gives each other class 60%: a wrong label is at "
                     "least as likely as the right one from rate (K - 1) / K = 0.5, so a model "
                     "trained on these labels learns wrong ones; lower the rate below 0.5"]


@pytest.mark.parametrize(("k", "rate", "warns"), [
    (2, 0.49, False), (2, 0.5, True), (3, 0.66, False), (3, 0.67, True), (5, 0.79, False),
    (5, 0.8, True)])
def test_uniform_noise_warns_from_k_minus_one_over_k(k, rate, warns):
    assert bool(_noise(_labels(k, 20), method="uniform", rate=rate)) == warns


def test_uniform_noise_below_the_threshold_is_quiet_whatever_the_draw():
    """A small class can tip by chance (items are drawn over all classes): the rate
    decides, not the draw."""
    labels = np.array(["a"] * 4 + ["b"] * 36)
    assert not any(_noise(labels, method="uniform", rate=0.45, random_state=seed)
                   for seed in range(20))


def test_a_matrix_sending_a_class_to_one_other_warns_below_the_uniform_threshold():
    matrix = np.array([[0.2, 0.8, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    found = _noise(_labels(3), method="class-dependent", rate=0.2, noise_matrix=matrix)
    assert len(found) == 1
    assert found[0].startswith("rate 0.2 gives class 'a' its own label on 20 of its 50 items "
                               "and 'b' on 30")
    assert "uniform noise" not in found[0]


def test_cli_noise_prints_the_warning(tmp_path, capsys):
    source = tmp_path / "clean.jsonl"
    frame = pd.DataFrame({"text": [f"item {i}" for i in range(40)], "label": _labels(2, 20)})
    source.write_text("".join(json.dumps(r) + "\n" for r in frame.to_dict("records")))
    assert main(["noise", str(source), "--method", "uniform", "--rate", "0.6",
                 "--out", str(tmp_path / "noisy.jsonl")]) == 0
    err = capsys.readouterr().err
    assert "labelaudit: warning: uniform noise at rate 0.6 over 2 classes" in err
    assert "a wrong label is at least as likely as the right one" in err
