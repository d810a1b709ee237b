import warnings

import numpy as np
import pytest

from labelaudit import InvalidInputError, InvalidParameterError
from labelaudit.io import TextDataset
from labelaudit.models import (
    FoldWarning,
    Scorer,
    crossfit_pred_probs,
    fit_score_pred_probs,
    make_folds,
)


class SpyScorer(Scorer):
    """Records which item indices every fitted model saw; predicts from memory."""

    name = "spy"
    log: list = []

    def prepare(self, data, *, progress=False):
        return np.arange(len(data))

    def fit(self, features, labels, *, n_classes):
        self.seen_ = set(features.tolist())
        self.n_classes_ = n_classes
        return self

    def predict_proba(self, features):
        SpyScorer.log.append((self.seen_, set(features.tolist())))
        return np.full((len(features), self.n_classes_), 1.0 / self.n_classes_)


def test_no_item_is_scored_by_a_model_that_saw_it():
    labels = np.array([0, 1, 2] * 10)
    SpyScorer.log = []
    folds = make_folds(labels, n_folds=5, random_state=3)
    probs = crossfit_pred_probs(SpyScorer(), np.arange(30), labels, folds, n_classes=3)
    assert len(SpyScorer.log) == 5
    scored = set()
    for seen, predicted in SpyScorer.log:
        assert not seen & predicted
        scored |= predicted
    assert scored == set(range(30))  # and every item is scored exactly once
    assert sum(len(p) for _, p in SpyScorer.log) == 30
    np.testing.assert_allclose(probs.sum(axis=1), 1.0)


def test_folds_are_stratified_and_seeded():
    labels = np.array([0] * 10 + [1] * 5)
    folds = make_folds(labels, n_folds=5, random_state=0)
    for f in range(5):
        assert np.bincount(labels[folds == f], minlength=2).tolist() == [2, 1]
    assert (make_folds(labels, n_folds=5, random_state=0) == folds).all()
    assert not (make_folds(labels, n_folds=5, random_state=1) == folds).all()


def test_small_class_lowers_the_default_folds_with_a_warning():
    labels = np.array([0] * 10 + [1] * 3)
    with pytest.warns(FoldWarning, match="using 3 folds"):
        folds = make_folds(labels, classes=np.array(["a", "b"]))
    assert len(np.unique(folds)) == 3
    with pytest.raises(InvalidParameterError, match="smallest class, 'b', has 3 items"):
        make_folds(labels, n_folds=5, classes=np.array(["a", "b"]))


def test_single_item_class_is_refused_naming_it():
    with pytest.raises(InvalidInputError, match=r"\['rare'\].*single item"):
        make_folds(np.array([0, 0, 0, 1]), classes=np.array(["common", "rare"]))


def test_bad_fold_count():
    with warnings.catch_warnings():
        with pytest.raises(InvalidParameterError):
            make_folds(np.array([0, 1] * 5), n_folds=1)


def test_fit_score_trains_on_train_only():
    SpyScorer.log = []
    probs = fit_score_pred_probs(SpyScorer(), np.arange(10), np.array([0, 1] * 5),
                                 np.arange(100, 104), n_classes=2)
    seen, predicted = SpyScorer.log[0]
    assert seen == set(range(10)) and predicted == set(range(100, 104))
    assert probs.shape == (4, 2)


def test_missing_class_in_a_fold_gets_zero_probability():
    from labelaudit.models import TfidfScorer

    data = TextDataset(np.arange(6), ["a b", "a c", "b d", "x y", "x z", "q"], None,
                       np.array([0, 0, 0, 1, 1, 2]), np.array([0, 1, 2]))
    scorer = TfidfScorer()
    features = scorer.prepare(data)
    model = scorer.fit(features[:5], data.labels[:5], n_classes=3)
    probs = model.predict_proba(features[5:])
    assert probs.shape == (1, 3) and probs[0, 2] == 0.0


def test_a_fine_tuning_fold_asks_ray_for_a_gpu_only_where_there_is_one():
    from labelaudit.models import FinetuneScorer, TfidfScorer
    from labelaudit.models._folds import ray_fold_resources

    gpus = {"CPU": 16.0, "GPU": 4.0}
    assert ray_fold_resources(FinetuneScorer(), gpus) == {"num_cpus": 1, "num_gpus": 1}
    assert ray_fold_resources(FinetuneScorer(), {"CPU": 16.0})["num_gpus"] == 0
    assert ray_fold_resources(FinetuneScorer(device="cpu"), gpus)["num_gpus"] == 0
    assert ray_fold_resources(TfidfScorer(), gpus)["num_gpus"] == 0


def test_scan_refuses_an_unknown_engine_and_a_stray_ray_address():
    from tests.conftest import make_topic_frame

    from labelaudit import scan

    frame = make_topic_frame(10)
    with pytest.raises(InvalidParameterError, match="engine"):
        scan(frame, scorers=["tfidf"], engine="spark")
    with pytest.raises(InvalidParameterError, match="engine='ray'"):
        scan(frame, scorers=["tfidf"], ray_address="auto")


def test_a_ray_fold_reserves_memory_by_its_class_count():
    from labelaudit._errors import InvalidInputError
    from labelaudit.models import TfidfScorer
    from labelaudit.models._folds import ray_fold_resources

    cluster = {"CPU": 16.0, "memory": 64e9}
    few = ray_fold_resources(TfidfScorer(), cluster, n_items=160_000, n_classes=20)
    many = ray_fold_resources(TfidfScorer(), cluster, n_items=160_000, n_classes=5000)
    assert many["memory"] > 5 * few["memory"] and many["num_cpus"] == 1
    # the weights stay within the feature cap's budget however many classes there are
    assert ray_fold_resources(TfidfScorer(), cluster, n_items=160_000,
                              n_classes=50_000)["memory"] < 4e9
    assert "memory" not in ray_fold_resources(TfidfScorer(), cluster)  # size not known
    with pytest.raises(InvalidInputError, match="largest Ray node"):
        ray_fold_resources(TfidfScorer(), cluster, n_items=160_000, n_classes=5000,
                           node_memory=1e9)
