"""Multi-label noise: exact per-class flip counts, seeded, provenance columns, label sets
read from lists or separated text, and single-label options refused in one line."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from labelaudit._errors import InvalidParameterError
from labelaudit.cli import main
from labelaudit.noise import LabelSetNoiseResult, inject_label_set_noise, inject_noise_table


def _sets(n: int = 200, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    names = np.array(["a", "b", "c", "d"])
    return pd.DataFrame({"id": [f"i{k}" for k in range(n)], "text": ["x"] * n,
                         "tags": [sorted(names[rng.random(4) < 0.3].tolist()) for _ in range(n)]})


def test_uniform_flips_exactly_the_rate_of_every_class_and_is_seeded():
    Y = (np.random.default_rng(1).random((203, 5)) < 0.4).astype(np.int8)
    classes = np.array(list("vwxyz"))
    result = inject_label_set_noise(Y, classes, rate=0.1, random_state=3)
    assert (result.clean != result.noisy).sum(axis=0).tolist() == [20] * 5  # round(20.3)
    again = inject_label_set_noise(Y, classes, rate=0.1, random_state=3)
    other = inject_label_set_noise(Y, classes, rate=0.1, random_state=4)
    assert np.array_equal(result.noisy, again.noisy)
    assert not np.array_equal(result.noisy, other.noisy)
    doc = result.to_dict()
    assert doc["added"] + doc["removed"] == 100 and doc["class_rates"]["v"] == pytest.approx(
        20 / 203)


def test_class_dependent_rates_differ_by_class_around_the_rate():
    Y = np.zeros((1000, 6), dtype=np.int8)
    result = inject_label_set_noise(Y, np.arange(6).astype(str), method="class-dependent",
                                    rate=0.2, random_state=0)
    assert result.class_rates.mean() == pytest.approx(0.2, abs=0.002)
    assert result.class_rates.std() > 0.02
    assert "class-dependent label-set noise" in result.summary()
    with pytest.raises(InvalidParameterError, match="does not noise label sets"):
        inject_label_set_noise(Y, np.arange(6).astype(str), method="instance-dependent",
                               rate=0.1)
    with pytest.raises(InvalidParameterError, match=r"rate must be a number in \[0, 1\)"):
        inject_label_set_noise(Y, np.arange(6).astype(str), rate=1.0)


def test_table_noise_reads_lists_and_text_and_keeps_provenance():
    frame = _sets()
    result = inject_noise_table(frame, label="tags", method="uniform", rate=0.05, id="id")
    assert isinstance(result, LabelSetNoiseResult)
    noisy = result.apply_to(frame, label="tags")
    changed = noisy[noisy["is_noisy"]]
    assert len(changed) > 0 and (changed["noise_method"] == "uniform").all()
    assert noisy.loc[~noisy["is_noisy"], "noise_method"].isna().all()
    row = changed.iloc[0]
    assert sorted(set(row["clean_label"]) ^ set(row["tags"])) == sorted(
        row["added"] + row["removed"])
    text = frame.assign(tags=frame["tags"].map("|".join))
    joined = inject_noise_table(text, label="tags", method="uniform", rate=0.05, id="id",
                                label_sep="|")
    np.testing.assert_array_equal(joined.noisy, result.noisy)
    assert joined.apply_to(text, label="tags", sep="|")["tags"].map(type).eq(str).all()
    with pytest.raises(InvalidParameterError, match=r"noise_matrix=, sources= go with one"):
        inject_noise_table(frame, label="tags", method="uniform", rate=0.05,
                           noise_matrix=np.eye(4), sources={"a": "x"})


def test_cli_noises_label_sets_as_lists_or_text(tmp_path, capsys):
    frame = _sets()
    frame.to_json(tmp_path / "posts.jsonl", orient="records", lines=True)
    assert main(["noise", str(tmp_path / "posts.jsonl"), "--label", "tags", "--method",
                 "uniform", "--rate", "0.1", "--out", str(tmp_path / "noisy.csv")]) == 0
    assert "uniform label-set noise" in capsys.readouterr().err
    written = pd.read_csv(tmp_path / "noisy.csv", keep_default_na=False)
    assert {"clean_label", "is_noisy", "noise_method", "added", "removed"} <= set(written)
    assert written["tags"].str.contains(r"\|").any()  # sets joined in a CSV
    assert main(["noise", str(tmp_path / "noisy.csv"), "--label", "clean_label",
                 "--label-sep", "|", "--method", "class-dependent", "--rate", "0.1",
                 "--out", str(tmp_path / "again.jsonl"), "--quiet"]) == 1
    assert "clean_label" in capsys.readouterr().err  # the added columns exist already
    assert main(["noise", str(tmp_path / "posts.jsonl"), "--label", "tags", "--method",
                 "crowd-majority", "--quiet"]) == 1
    assert "does not noise label sets" in capsys.readouterr().err
