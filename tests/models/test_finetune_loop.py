"""The fine-tuning scorer's GPU path, checked on a CPU with a tiny random BERT: batches
sorted by length give outputs in item order, a fixed seed gives identical folds, folds on
several devices equal folds in turn, and bad models and lengths get one clear line."""

from __future__ import annotations

import numpy as np
import pytest
from tests.conftest import make_topic_frame

from labelaudit._errors import InvalidParameterError
from labelaudit.io import prepare_text_dataset
from labelaudit.models import FinetuneScorer, crossfit_pred_probs, make_folds
from labelaudit.models._encoder import MaxLengthWarning


@pytest.fixture(scope="module")
def data():
    frame = make_topic_frame(6)
    # lengths that differ, so length-sorted batches reorder the items
    frame["text"] = [t + " the" * (i % 7) for i, t in enumerate(frame["text"])]
    return prepare_text_dataset(frame, text="text", label="label")


def _scorer(model, **options):
    return FinetuneScorer(model=str(model), epochs=1, batch_size=8, max_length=32,
                          device="cpu", **options)


def test_length_sorted_batches_return_rows_in_item_order(tiny_bert_dir, data):
    scorer = _scorer(tiny_bert_dir, eval_batch_size=5)
    features = scorer.prepare(data)
    order = features.batches(np.random.default_rng(0), 5, shuffle=False)
    assert not np.array_equal(np.concatenate(order), np.arange(len(data)))  # really sorted
    fitted = scorer.fit(features, data.labels, n_classes=3)
    together = fitted.predict_proba(features)
    alone = np.vstack([fitted.predict_proba(features[[i]]) for i in range(len(data))])
    np.testing.assert_allclose(together, alone, atol=1e-5)


def test_a_fixed_seed_gives_identical_fold_outputs(tiny_bert_dir, data):
    folds = make_folds(data.labels, n_folds=3)
    runs = []
    for _ in range(2):
        scorer = _scorer(tiny_bert_dir, random_state=3)
        runs.append(crossfit_pred_probs(scorer, scorer.prepare(data), data.labels, folds,
                                        n_classes=3))
    np.testing.assert_array_equal(runs[0], runs[1])
    other = _scorer(tiny_bert_dir, random_state=4)
    assert not np.allclose(runs[0], crossfit_pred_probs(other, other.prepare(data),
                                                        data.labels, folds, n_classes=3))


def test_folds_on_two_devices_at_once_equal_folds_in_turn(tiny_bert_dir, data):
    folds = make_folds(data.labels, n_folds=3)
    in_turn = _scorer(tiny_bert_dir)
    expected = crossfit_pred_probs(in_turn, in_turn.prepare(data), data.labels, folds,
                                   n_classes=3)
    parallel = FinetuneScorer(model=str(tiny_bert_dir), epochs=1, batch_size=8,
                              max_length=32, devices=["cpu", "cpu"])
    assert parallel.fold_devices() == ["cpu", "cpu"]
    got = crossfit_pred_probs(parallel, parallel.prepare(data), data.labels, folds,
                              n_classes=3)
    np.testing.assert_allclose(got, expected, atol=1e-5)


def test_one_device_or_a_set_device_runs_folds_in_turn():
    assert FinetuneScorer(device="cpu").fold_devices() == []
    assert FinetuneScorer().on_device("cuda:1").device == "cuda:1"
    with pytest.raises(InvalidParameterError, match="list of device names"):
        FinetuneScorer(devices="cuda:0").fold_devices()


def test_a_max_length_beyond_the_model_is_clamped_with_a_warning(tiny_bert_dir, data):
    long = FinetuneScorer(model=str(tiny_bert_dir), max_length=4096)  # the model takes 128
    with pytest.warns(MaxLengthWarning, match="max_length 4096 .* using 128"):
        features = long.prepare(data)
    assert features.lengths.max() <= 128


def test_a_model_that_cannot_be_loaded_is_one_line_naming_local_folders(data):
    with pytest.raises(InvalidParameterError, match="cannot load model .*local folder"):
        FinetuneScorer(model="no such model//at all").prepare(data)


def test_cli_names_the_model_that_does_not_load(tmp_path, capsys):
    from labelaudit.cli import main

    path = tmp_path / "data.csv"
    make_topic_frame(5).to_csv(path, index=False)
    code = main(["scan", str(path), "--scorers", "finetune", "--model", "no such//model",
                 "--out", str(tmp_path / "out.csv")])
    err = capsys.readouterr().err
    assert code == 1 and "--model takes a local folder" in err
    assert len(err.strip().splitlines()) == 1 and not (tmp_path / "out.csv").exists()
