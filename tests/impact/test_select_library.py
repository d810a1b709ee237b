"""``select_models``: model selection on clean, noisy and corrected validation data."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from tests.conftest import make_select_task

from labelaudit._errors import InvalidInputError, InvalidParameterError
from labelaudit.impact import ModelConfig, SelectionResult, select_models, sweep_configs
from labelaudit.impact._select import label_versions
from labelaudit.io import prepare_text_dataset
from labelaudit.noise import noisy_labels, parse_noise

GOOD = ModelConfig("tfidf", {"C": 1.0, "ngram_range": (1, 1), "min_df": 2})
MEMORISER = ModelConfig("tfidf", {"C": 1000.0, "ngram_range": (1, 1), "min_df": 1})


@pytest.fixture(scope="module")
def splits():
    return make_select_task(60, 0), make_select_task(30, 1), make_select_task(30, 2)


@pytest.fixture(scope="module")
def result(splits):
    return select_models(*splits, noise="uniform:0.2", n_configs=3, seeds=2, random_state=0,
                         progress=False)


def memorisable_task(flip_rate: float = 0.2) -> pd.DataFrame:
    """40 texts ``<class word> u<i>``; the noisy labels flip the same items in every split."""
    n = 40
    clean = np.array(["a", "b"])[np.arange(n) % 2]
    noisy = clean.copy()
    flipped = np.arange(int(flip_rate * n)) * 5 % n  # items 0, 5, 10...: both classes
    noisy[flipped] = np.where(clean[flipped] == "a", "b", "a")
    return pd.DataFrame({"text": [f"{'alpha' if c == 'a' else 'beta'} u{i}"
                                  for i, c in enumerate(clean)],
                         "label": clean, "noisy": noisy})


def test_noisy_validation_picks_a_worse_model_than_clean_validation():
    # Train, validation and test hold the same 40 texts, each with a word of its class and
    # a word of its own; the noisy labels flip the same 8 items in train and validation.
    # GOOD (min_df=2) drops the per-item words and predicts the class word's majority label,
    # the clean one: 100 % on clean validation and test, 80 % on noisy validation.
    # MEMORISER (C=1000 on the per-item words) reproduces the noisy training labels on the
    # same texts: 100 % on noisy validation, 80 % on clean validation and test. So noisy
    # validation selects MEMORISER (true accuracy 0.8, rank 2), clean validation GOOD (1.0).
    frame = memorisable_task()
    result = select_models(frame, frame, frame, noise=None, noisy_label="noisy",
                           configs=[GOOD, MEMORISER], seeds=1, progress=False)
    acc = result.accuracy[0]
    np.testing.assert_allclose(acc[:, [0, 1, 3]], [[1.0, 0.8, 1.0], [0.8, 1.0, 0.8]])
    rows = result.to_frame().set_index("validation")
    assert rows.loc["clean", "config"] == GOOD.name
    assert rows.loc["noisy", "config"] == MEMORISER.name
    assert rows.loc["clean", "true_accuracy"] == 1.0 and rows.loc["clean", "rank"] == 1
    assert rows.loc["noisy", "true_accuracy"] == 0.8 and rows.loc["noisy", "rank"] == 2
    assert rows.loc["noisy", "measurable_accuracy"] == pytest.approx(1.0)  # noisy test
    assert result.n_noisy[0].tolist() == [8, 8, 8]
    assert result.n_relabelled[0].tolist() == [0, 8, 8]


def test_selection_ranks_and_ties_by_hand():
    # One seed, three configs; columns: val clean, noisy, corrected, test clean, noisy, corr.
    accuracy = np.array([[[0.9, 0.7, 0.8, 0.85, 0.70, 0.80],
                          [0.8, 0.8, 0.8, 0.90, 0.75, 0.85],
                          [0.7, 0.8, 0.9, 0.80, 0.90, 0.95]]])
    configs = tuple(ModelConfig("tfidf", {"C": c}) for c in (1.0, 2.0, 3.0))
    zeros = np.zeros((1, 3), dtype=int)
    result = SelectionResult(configs, accuracy, np.arange(1), "uniform:0.1", np.array([9, 9, 9]),
                             zeros, zeros, zeros, 0.0)
    rows = result.to_frame().set_index("validation")
    # clean picks config 0 (true 0.85, rank 2); noisy ties configs 1 and 2: the first
    # wins (true 0.90, rank 1); corrected picks config 2 (true 0.80, rank 3).
    assert result.selected("noisy").tolist() == [1]
    assert rows["true_accuracy"].tolist() == [0.85, 0.90, 0.80]
    assert rows["measurable_accuracy"].tolist() == [0.85, 0.75, 0.95]
    assert rows["rank"].tolist() == [2, 1, 3]
    summary = result.summary_frame().set_index("validation")
    assert summary.loc["corrected", "rank_mean"] == 3 and summary.loc["clean", "rank_std"] == 0
    assert "corrected" in result.summary()


def test_result_shapes_and_json(result):
    assert result.accuracy.shape == (2, 3, 6)
    assert ((result.accuracy >= 0) & (result.accuracy <= 1)).all()
    frame = result.to_frame()
    assert len(frame) == 6 and set(frame["validation"]) == {"clean", "noisy", "corrected"}
    clean = frame[frame["validation"] == "clean"]
    np.testing.assert_allclose(clean["true_accuracy"], clean["measurable_accuracy"])
    document = json.loads(json.dumps(result.to_dict()))
    assert set(document["summary"]) == {"clean", "noisy", "corrected"}
    assert document["n_items"] == {"train": 60, "val": 30, "test": 30}
    assert len(document["configs"]) == 3 and len(document["labels"]) == 2


def test_noisy_splits_differ_at_exactly_the_rate(result):
    # round(0.2 * 60) = 12 training labels and round(0.2 * 30) = 6 of each evaluation split.
    assert result.n_noisy.tolist() == [[12, 6, 6], [12, 6, 6]]
    assert result.n_relabelled.tolist() == [[0, 6, 6], [0, 6, 6]]
    assert (result.n_fixed <= result.n_relabelled).all()


def test_corrected_relabels_exactly_the_top_err_share(splits):
    train, val, _ = splits
    data = prepare_text_dataset(train, text="text", label="label")
    split = prepare_text_dataset(val, text="text", label="label", classes=data.classes)
    noisy_train = noisy_labels(train, label="label", method="uniform", rate=0.2,
                               classes=data.classes, text="text", text_pair=None,
                               random_state=1)
    noisy = noisy_labels(val, label="label", method="uniform", rate=0.2, classes=data.classes,
                         text="text", text_pair=None, random_state=2)
    assert (noisy != split.labels).sum() == 6
    train_data = type(data)(data.ids, data.texts, None, noisy_train, data.classes)
    versions = label_versions(train_data, split, noisy, scorers=["tfidf"], random_state=0,
                              options={"tol": 1e-4})
    clean_v, noisy_v, corrected = versions.labels
    assert (clean_v == split.labels).all() and (noisy_v == noisy).all()
    assert versions.relabelled.sum() == 6
    changed = corrected != noisy
    assert (changed == versions.relabelled).all()  # a suggested label is never the given one
    assert versions.n_fixed >= 4  # an easy task: most relabelled items were the noised ones


def test_same_random_state_same_result(splits, result):
    again = select_models(*splits, noise="uniform:0.2", n_configs=3, seeds=2, random_state=0,
                          progress=False)
    np.testing.assert_array_equal(again.accuracy, result.accuracy)
    pd.testing.assert_frame_equal(again.to_frame(), result.to_frame())
    other = select_models(*splits, noise="uniform:0.2", n_configs=3, seeds=2, random_state=1,
                          progress=False)
    assert [c.name for c in other.configs] != [c.name for c in result.configs] or \
        not np.array_equal(other.accuracy, result.accuracy)


def test_sweep_in_worker_processes_gives_the_same_result(splits, result):
    spread = select_models(*splits, noise="uniform:0.2", n_configs=3, seeds=2, random_state=0,
                           progress=False, workers=2)
    np.testing.assert_array_equal(spread.accuracy, result.accuracy)


def test_sweep_configs():
    assert len(sweep_configs(42)) == 42
    assert len({c.name for c in sweep_configs(42)}) == 42
    assert len(sweep_configs(49, scorers=["tfidf", "embed"])) == 49
    assert sweep_configs(5, random_state=3) == sweep_configs(5, random_state=3)
    for bad in (0, 43, 2.5, True):
        with pytest.raises(InvalidParameterError, match="n_configs"):
            sweep_configs(bad)
    with pytest.raises(InvalidParameterError, match="scorers"):
        sweep_configs(3, scorers=["finetune"])


def test_parse_noise():
    assert parse_noise("class-dependent:0.1") == ("class-dependent", 0.1)
    for bad in ("uniform", "nope:0.1", "uniform:x", "uniform:0", "uniform:1.5"):
        with pytest.raises(InvalidParameterError, match="noise"):
            parse_noise(bad)


def test_bad_options(splits):
    def run(**options):
        return select_models(*splits, **{"n_configs": 2, "seeds": 1, **options})

    with pytest.raises(InvalidParameterError, match="exactly one"):
        run(noise=None)
    with pytest.raises(InvalidParameterError, match="exactly one"):
        run(noise="uniform:0.1", noisy_label="label")
    with pytest.raises(InvalidParameterError, match="seeds"):
        run(seeds=0)
    with pytest.raises(InvalidParameterError, match="configs"):
        run(configs=[])
    with pytest.raises(InvalidParameterError, match="workers"):
        run(noise="uniform:0.1", workers=0)


def test_bad_data(splits):
    train, val, test = splits
    with pytest.raises(InvalidInputError, match=r"^val: missing column 'text'"):
        select_models(train, val.rename(columns={"text": "body"}), test, n_configs=2, seeds=1)
    unseen = test.assign(label=test["label"].where(test.index > 0, "music"))
    with pytest.raises(InvalidInputError, match=r"^test: .*outside the training label set"):
        select_models(train, val, unseen, n_configs=2, seeds=1)
    with pytest.raises(InvalidInputError, match=r"^train: missing column 'noisy'"):
        select_models(train, val, test, noise=None, noisy_label="noisy", n_configs=2, seeds=1)


def test_the_selection_result_writes_itself():
    from labelaudit.impact import SelectionResult

    assert callable(getattr(SelectionResult, "write", None))
