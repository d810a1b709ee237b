import numpy as np
import pytest

from labelaudit import InvalidParameterError
from labelaudit.detect import confident_learning, ensemble_pred_probs


def test_equal_weights_is_plain_average():
    a = np.array([[0.8, 0.2], [0.4, 0.6]])
    b = np.array([[0.6, 0.4], [0.2, 0.8]])
    out = ensemble_pred_probs([a, b], weights="equal")
    np.testing.assert_allclose(out.pred_probs, (a + b) / 2)
    np.testing.assert_allclose(out.weights, [0.5, 0.5])


def test_auto_weights_prefer_the_member_that_predicts_better():
    rng = np.random.default_rng(0)
    labels = rng.integers(3, size=200)
    good = np.full((200, 3), 0.1)
    good[np.arange(200), labels] = 0.8
    noise = rng.dirichlet(np.ones(3), size=200)
    out = ensemble_pred_probs([noise, good], labels)
    assert out.weights[1] > 0.9
    assert out.weights.sum() == pytest.approx(1.0)


def test_explicit_weights_are_normalised_and_checked():
    a, b = np.eye(2), np.full((2, 2), 0.5)
    np.testing.assert_allclose(ensemble_pred_probs([a, b], weights=[3, 1]).weights, [0.75, 0.25])
    with pytest.raises(InvalidParameterError):
        ensemble_pred_probs([a, b], weights=[1.0])
    with pytest.raises(InvalidParameterError):
        ensemble_pred_probs([a, b], weights="auto")  # needs labels
    with pytest.raises(InvalidParameterError):
        ensemble_pred_probs([])


def test_confident_learning_flags_and_ranks_flagged_first():
    probs = np.array([[0.9, 0.1]] * 8 + [[0.1, 0.9]] * 8)
    labels = np.array([0] * 7 + [1] + [1] * 6 + [0, 0])
    cl = confident_learning(labels, probs)
    assert set(np.flatnonzero(cl.is_issue)) == {7, 14, 15}
    assert cl.n_issues == 3
    # every flagged item scores below every unflagged one
    assert cl.scores[cl.is_issue].max() < cl.scores[~cl.is_issue].min()


def test_confident_learning_perfect_model_flags_nothing():
    labels = np.array([0, 1] * 10)
    probs = np.eye(2)[labels] * 0.98 + 0.01
    assert not confident_learning(labels, probs).is_issue.any()


def test_temperature_scaling_sharpens_an_unsure_model_and_keeps_argmax():
    from labelaudit.detect import temperature_scale

    rng = np.random.default_rng(0)
    labels = rng.integers(3, size=300)
    probs = np.full((300, 3), 0.3)
    probs[np.arange(300), labels] = 0.4  # right but timid
    scaled, t = temperature_scale(probs, labels)
    assert t < 1.0
    assert (scaled.argmax(1) == probs.argmax(1)).all()
    np.testing.assert_allclose(scaled.sum(1), 1.0)


def test_calibrated_weights_do_not_reward_a_soft_member():
    # a sharp, accurate member and a soft, less accurate one: without calibration log loss
    # prefers the soft one; after temperature scaling the accurate one wins
    rng = np.random.default_rng(1)
    n = 400
    labels = rng.integers(2, size=n)
    sharp = np.where(rng.random(n) < 0.95, labels, 1 - labels)
    sharp_probs = np.eye(2)[sharp] * 0.999 + 0.0005
    soft = np.where(rng.random(n) < 0.8, labels, 1 - labels)
    soft_probs = np.eye(2)[soft] * 0.3 + 0.35
    raw = ensemble_pred_probs([sharp_probs, soft_probs], labels, calibrate=False)
    calibrated = ensemble_pred_probs([sharp_probs, soft_probs], labels)
    assert calibrated.weights[0] > raw.weights[0]
    assert calibrated.temperatures[0] > 1.0 and calibrated.temperatures[1] < 1.0


def test_confident_learning_invariant_to_row_order_and_class_names():
    rng = np.random.default_rng(0)
    labels = rng.integers(3, size=90)
    probs = rng.dirichlet(np.ones(3) * 0.5, size=90)
    base = confident_learning(labels, probs)
    perm = rng.permutation(90)
    shuffled = confident_learning(labels[perm], probs[perm])
    assert (shuffled.is_issue == base.is_issue[perm]).all()
    np.testing.assert_allclose(shuffled.scores, base.scores[perm])
    rename = np.array([2, 0, 1])
    renamed = np.empty_like(probs)
    renamed[:, rename] = probs
    assert (confident_learning(rename[labels], renamed).is_issue == base.is_issue).all()


def test_ensemble_is_invariant_to_row_order():
    rng = np.random.default_rng(0)
    labels = rng.integers(3, size=60)
    a, b = rng.dirichlet(np.ones(3), size=60), rng.dirichlet(np.ones(3), size=60)
    base = ensemble_pred_probs([a, b], labels)
    perm = rng.permutation(60)
    shuffled = ensemble_pred_probs([a[perm], b[perm]], labels[perm])
    np.testing.assert_allclose(shuffled.weights, base.weights, atol=1e-4)
    np.testing.assert_allclose(shuffled.pred_probs, base.pred_probs[perm], atol=1e-4)


def test_confident_learning_never_forks_cleanlabs_pool_unless_asked(monkeypatch):
    """A forked child copies the locks other threads hold (Ray's, OpenMP's, torch's) and can
    hang for ever: one process unless n_jobs says otherwise."""
    import cleanlab.filter

    asked: list[object] = []
    real = cleanlab.filter.find_label_issues

    def find_label_issues(labels, pred_probs, **options):
        asked.append(options.get("n_jobs"))
        return real(labels, pred_probs, **options)

    monkeypatch.setattr(cleanlab.filter, "find_label_issues", find_label_issues)
    probs = np.array([[0.9, 0.1]] * 5 + [[0.1, 0.9]] * 5)
    labels = np.array([0, 0, 0, 0, 1, 1, 1, 1, 1, 1])
    confident_learning(labels, probs)
    confident_learning(labels, probs, n_jobs=2)
    assert asked == [1, 2]


def _cl_in_spawned_child() -> int:
    from labelaudit.detect import confident_learning

    rng = np.random.default_rng(0)
    probs = rng.dirichlet(np.ones(3), size=300)
    labels = rng.integers(0, 3, 300)
    return int(confident_learning(labels, probs).is_issue.sum())


def test_confident_learning_runs_where_processes_are_spawned():
    """macOS and spawned workers start processes with spawn: cleanlab's pool then lacked
    its globals (NameError 'pred_probs_by_class')."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        assert pool.submit(_cl_in_spawned_child).result() >= 0
