"""The learning-with-noisy-labels methods on one synthetic embedding problem.

Six Gaussian clusters in 16 dimensions, 600 training items of which about 40% carry a
uniformly flipped label, and 600 clean test items. A 64-unit MLP trained for 60 epochs
memorises much of the noise with plain cross-entropy, so a method that resists noise has
room to show it on the clean test set.
"""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from labelaudit._errors import InvalidInputError, InvalidParameterError  # noqa: E402
from labelaudit.models import (  # noqa: E402
    EmbeddingInputs,
    LoopConfig,
    head_factory,
    predict_proba,
    train_networks,
)
from labelaudit.training._methods import METHODS, make_method  # noqa: E402

# every method trains networks: `make test-fast` leaves these out
pytestmark = pytest.mark.heavy

N_CLASSES, DIM, NOISE, EPOCHS, BATCH = 6, 16, 0.4, 60, 32
CONFIG = LoopConfig(epochs=EPOCHS, batch_size=BATCH, learning_rate=3e-3, random_state=0)
OPTIONS = {
    "co-teaching": {"noise_rate": NOISE},
    "cnlcu": {"noise_rate": NOISE},
    "seal": {"record_predictions": True},
}


def _problem():
    rng = np.random.default_rng(0)
    centers = rng.normal(size=(N_CLASSES, DIM))

    def draw(n):
        y = rng.integers(0, N_CLASSES, n)
        return (centers[y] + rng.normal(size=(n, DIM))).astype(np.float32), y

    x, y = draw(600)
    x_test, y_test = draw(600)
    flipped = rng.random(600) < NOISE
    # flip to a different class, uniformly
    noisy = np.where(flipped, (y + rng.integers(1, N_CLASSES, 600)) % N_CLASSES, y)
    return x, y, noisy, x_test, y_test, flipped


X, Y, NOISY, X_TEST, Y_TEST, FLIPPED = _problem()
MAKE = head_factory(DIM, N_CLASSES, hidden=64, dropout=0.0)


@pytest.fixture(scope="module")
def runs():
    """Every method trained once on the noisy labels: (test accuracy, log, networks)."""
    out = {}
    for name in METHODS:
        method = make_method(name, **OPTIONS.get(name, {}))
        nets, log = train_networks(MAKE, EmbeddingInputs(X), NOISY, N_CLASSES, method, CONFIG)
        probs = predict_proba(nets[0], EmbeddingInputs(X_TEST))
        out[name] = (float((probs.argmax(axis=1) == Y_TEST).mean()), log, nets)
    return out


def test_the_problem_is_noisy_and_base_memorises_noise(runs):
    assert abs(FLIPPED.mean() - NOISE) < 0.05
    assert np.all(NOISY[FLIPPED] != Y[FLIPPED]) and np.all(NOISY[~FLIPPED] == Y[~FLIPPED])
    train_pred = predict_proba(runs["base"][2][0], EmbeddingInputs(X)).argmax(axis=1)
    # base fits a good share of the wrong labels: the room the robust methods work in
    assert (train_pred[FLIPPED] == NOISY[FLIPPED]).mean() > 0.3


# Measured on this problem with random_state=0 (see the module docstring): base 0.62,
# mixup 0.73, data-parameters 0.70, sr 0.65, co-teaching 0.87, cnlcu 0.86, seal 0.87.
# Methods that clearly beat base must keep a clear margin; SR's gain is small and is only
# required to match base within a tolerance.
CLEAR_GAIN = {"mixup": 0.05, "data-parameters": 0.04, "co-teaching": 0.15, "cnlcu": 0.15,
              "seal": 0.15}


@pytest.mark.parametrize("name", [n for n in METHODS if n != "base"])
def test_method_beats_or_matches_base_on_clean_test_labels(runs, name):
    base, accuracy = runs["base"][0], runs[name][0]
    assert accuracy >= base + CLEAR_GAIN.get(name, -0.02), (name, accuracy, base)


def test_every_method_learns_something(runs):
    for name, (accuracy, log, _) in runs.items():
        assert accuracy > 0.5, name
        if name != "sr":  # SR's penalty weight grows each epoch, and its loss with it
            assert log.losses[-1] < log.losses[0], name
        assert all(np.isfinite(log.losses)), name


def test_co_teaching_forget_rate_ramps_and_selection_follows_it(runs):
    n_batches = int(np.ceil(len(X) / BATCH))
    for name in ("co-teaching", "cnlcu"):
        info = runs[name][1].info
        forget = np.asarray(info["forget_rate"])
        assert forget.shape == (EPOCHS,)
        expected = NOISE * np.minimum(np.arange(EPOCHS) / 8, 1.0)  # t_k = 8
        np.testing.assert_allclose(forget, expected)
        assert forget[0] == 0 and forget[7] < NOISE and np.all(forget[8:] == NOISE)
        # each batch keeps round((1 - forget) * b): off by at most half an item per batch
        fraction = np.asarray(info["selected_fraction"])
        assert np.all(np.abs(fraction - (1 - forget)) <= 0.5 * n_batches / len(X) + 1e-12)
        assert fraction[0] == 1.0 and abs(fraction[-1] - 0.6) < 0.02


def test_seal_soft_labels_are_epoch_averages_of_the_previous_round(runs):
    _, log, _ = runs["seal"]
    soft, recorded = log.info["soft_labels"], log.info["epoch_predictions"]
    assert len(soft) == len(recorded) == 4
    assert log.epochs == 4 * EPOCHS and len(log.losses) == 4 * EPOCHS
    for average, epochs in zip(soft, recorded, strict=True):
        assert len(epochs) == EPOCHS
        np.testing.assert_allclose(average, np.mean(epochs, axis=0), rtol=0, atol=1e-12)
        np.testing.assert_allclose(average.sum(axis=1), 1.0, atol=1e-9)
    # the rounds differ: later rounds learn from soft labels, not the given ones
    assert np.abs(soft[0] - soft[1]).max() > 0.05
    # the soft labels move away from the wrong given labels
    given_mass = [s[FLIPPED, NOISY[FLIPPED]].mean() for s in soft]
    assert given_mass[-1] < given_mass[0]


def test_seal_first_round_is_cross_entropy_on_the_given_labels(runs):
    method = make_method("seal", n_rounds=1)
    nets, _ = train_networks(MAKE, EmbeddingInputs(X), NOISY, N_CLASSES, method, CONFIG)
    base_probs = predict_proba(runs["base"][2][0], EmbeddingInputs(X_TEST))
    np.testing.assert_array_equal(predict_proba(nets[0], EmbeddingInputs(X_TEST)), base_probs)


def test_data_parameters_give_noisy_items_higher_temperatures(runs):
    temperature = runs["data-parameters"][1].info["instance_temperature"]
    assert temperature.shape == (len(X),)
    assert temperature[FLIPPED].mean() > 2 * temperature[~FLIPPED].mean()


def test_sr_records_a_growing_weight(runs):
    weights = runs["sr"][1].info["lambda"]
    assert len(weights) == EPOCHS and weights[0] == 0.5
    assert np.all(np.diff(weights) > 0)


@pytest.mark.parametrize("name", ["base", "mixup", "co-teaching"])
def test_same_random_state_same_predictions(name):
    config = LoopConfig(epochs=3, batch_size=BATCH, random_state=7)

    def fit(cfg):
        method = make_method(name, **OPTIONS.get(name, {}))
        nets, _ = train_networks(head_factory(DIM, N_CLASSES, hidden=16), EmbeddingInputs(X),
                                 NOISY, N_CLASSES, method, cfg)
        return predict_proba(nets[0], EmbeddingInputs(X_TEST))

    first, again = fit(config), fit(config)
    np.testing.assert_array_equal(first, again)
    other = fit(LoopConfig(epochs=3, batch_size=BATCH, random_state=8))
    assert not np.array_equal(first, other)


def test_predict_proba_rows_sum_to_one_and_follow_input_order(runs):
    net = runs["mixup"][2][0]
    probs = predict_proba(net, EmbeddingInputs(X_TEST), batch_size=7)
    assert probs.shape == (len(X_TEST), N_CLASSES) and probs.dtype == np.float64
    np.testing.assert_allclose(probs.sum(axis=1), 1.0, atol=1e-12)
    order = np.random.default_rng(0).permutation(len(X_TEST))
    shuffled = predict_proba(net, EmbeddingInputs(X_TEST[order]), batch_size=64)
    np.testing.assert_allclose(shuffled, probs[order], atol=1e-6)
    assert not net.training


def test_networks_come_back_in_eval_mode_one_per_network(runs):
    assert len(runs["co-teaching"][2]) == 2 and len(runs["base"][2]) == 1
    assert all(not net.training for _, _, nets in runs.values() for net in nets)


def test_warmup_schedule_and_linear_head_train():
    config = LoopConfig(epochs=4, batch_size=BATCH, warmup=0.25, random_state=0)
    nets, log = train_networks(head_factory(DIM, N_CLASSES, hidden=0), EmbeddingInputs(X),
                               NOISY, N_CLASSES, make_method("base"), config)
    assert type(nets[0]).__name__ == "HeadNetwork" and nets[0].hidden == 0
    assert log.epochs == 4 and len(log.losses) == 4 and log.losses[-1] < log.losses[0]


def test_unknown_method_names_the_known_ones():
    with pytest.raises(InvalidParameterError) as error:
        make_method("nope")
    for name in ("base", "mixup", "data-parameters", "sr", "co-teaching", "cnlcu", "seal"):
        assert repr(name) in str(error.value)
    assert "filter" not in METHODS


@pytest.mark.parametrize("name", ["co-teaching", "cnlcu"])
def test_sample_selection_needs_a_noise_rate(name):
    with pytest.raises(InvalidParameterError, match="noise_rate"):
        make_method(name)
    assert make_method(name, noise_rate=0.2).noise_rate == 0.2


def test_bad_options_and_labels_are_reported():
    with pytest.raises(InvalidParameterError, match="no option"):
        make_method("mixup", beta=2.0)
    with pytest.raises(InvalidParameterError, match="noise_rate"):
        make_method("co-teaching", noise_rate=1.5)
    assert make_method("base", noise_rate=0.3).name == "base"  # ignored where unused
    labels = NOISY.copy()
    labels[[3, 9]] = N_CLASSES
    with pytest.raises(InvalidInputError, match="rows 3, 9"):
        train_networks(MAKE, EmbeddingInputs(X), labels, N_CLASSES, make_method("base"),
                       LoopConfig(epochs=1))
    with pytest.raises(InvalidParameterError, match="epochs"):
        train_networks(MAKE, EmbeddingInputs(X), NOISY, N_CLASSES, make_method("base"),
                       LoopConfig(epochs=0))
