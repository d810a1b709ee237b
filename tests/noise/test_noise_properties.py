"""Hypothesis properties of inject_noise: exact rates, determinism, valid flips.

The methods come from ``labelaudit.noise.NOISE_METHODS``, so a newly listed method is
tested here without a change. Every method gets the crowd annotations
(those that need none ignore them). Crowd-majority, whose rate is only a cap, has its own
property below; a method that cannot noise every item needs its capacity in ``_capacity``.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from noise_crowds import random_crowd

from labelaudit import InvalidInputError
from labelaudit.noise import NOISE_METHODS, inject_noise
from labelaudit.noise._common import target_count

SETTINGS = settings(max_examples=25, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])
CAP_ONLY = ("crowd-majority",)  # the rate is a cap: test_dissenting_methods_only_use...
CROWD_METHODS = ("dissenting-label", "dissenting-worker", "minority-split")  # see _capacity
ALL_METHODS = tuple(name for name in NOISE_METHODS if name not in CAP_ONLY)


def _run(method, seed, rate, *, n_items=40, n_classes=3, accuracy=0.7, random_state=0,
         frame=None):
    if frame is None:
        frame = random_crowd(seed, n_items=n_items, n_classes=n_classes, accuracy=accuracy)
    embeddings = np.random.default_rng(seed).normal(size=(len(frame), 4))
    result = inject_noise(
        frame["gold"], method=method, rate=rate, random_state=random_state,
        classes=[f"c{k}" for k in range(n_classes)],
        annotations=frame["annotator_labels"],
        embeddings=embeddings if method == "instance-dependent" else None,
    )
    return frame, result


def _capacity(frame, method) -> int:
    """How many items a method can noise, computed independently of the library."""
    if method == "instance-dependent" and frame["gold"].nunique() < 2:
        return 0  # it moves an item towards a neighbour of another class: there is none
    if method not in CROWD_METHODS:
        return len(frame)
    count = 0
    for gold, notes in zip(frame["gold"], frame["annotator_labels"], strict=True):
        dissent = [a for a in notes if a["label"] != gold]
        count += bool(dissent) and (method != "minority-split" or len(notes) >= 2)
    return count


@SETTINGS
@given(method=st.sampled_from(ALL_METHODS), seed=st.integers(0, 10_000),
       rate=st.floats(0.0, 0.95), n_items=st.integers(5, 50),
       n_classes=st.integers(2, 4), accuracy=st.floats(0.3, 1.0))
def test_achieved_count_is_exact_or_a_clear_error(method, seed, rate, n_items, n_classes,
                                                  accuracy):
    frame = random_crowd(seed, n_items=n_items, n_classes=n_classes, accuracy=accuracy)
    wanted = target_count(rate, n_items)
    possible = _capacity(frame, method)
    try:
        _, result = _run(method, seed, rate, n_classes=n_classes, frame=frame)
    except InvalidInputError as exc:
        assert wanted > possible, exc
        assert f"at most {possible} of the {n_items} items" in str(exc)
        return
    assert wanted <= possible
    assert result.n_noisy == wanted
    assert result.achieved_rates().iloc[0]["n_noisy"] == wanted


@SETTINGS
@given(method=st.sampled_from(ALL_METHODS), seed=st.integers(0, 10_000),
       rate=st.floats(0.0, 0.3), random_state=st.integers(0, 2**31 - 1))
def test_same_seed_same_output(method, seed, rate, random_state):
    try:
        _, first = _run(method, seed, rate, random_state=random_state)
    except InvalidInputError:
        return
    _, again = _run(method, seed, rate, random_state=random_state)
    assert np.array_equal(first.labels, again.labels)
    assert np.array_equal(first.is_noisy, again.is_noisy)
    assert first.noise_method.tolist() == again.noise_method.tolist()


@SETTINGS
@given(method=st.sampled_from(ALL_METHODS), seed=st.integers(0, 10_000),
       rate=st.floats(0.0, 0.4))
def test_flips_change_the_label_to_one_of_the_label_set(method, seed, rate):
    try:
        frame, result = _run(method, seed, rate)
    except InvalidInputError:
        return
    labels, clean = result.labels, result.clean_labels
    assert np.array_equal(clean, frame["gold"].to_numpy().astype(clean.dtype))
    assert np.array_equal(labels != clean, result.is_noisy)
    assert set(labels.tolist()) <= set(result.classes.tolist())
    methods = result.noise_method.tolist()
    assert all((m is not None) == noisy
               for m, noisy in zip(methods, result.is_noisy.tolist(), strict=True))


@SETTINGS
@given(method=st.sampled_from(CROWD_METHODS + CAP_ONLY),
       seed=st.integers(0, 10_000), rate=st.floats(0.0, 0.3),
       random_state=st.integers(0, 1000))
def test_dissenting_methods_only_use_labels_an_annotator_gave(method, seed, rate,
                                                              random_state):
    frame = random_crowd(seed, n_items=40, per_item=4)
    try:
        result = inject_noise(frame["gold"], method=method, classes=["c0", "c1", "c2"],
                              rate=None if method == "crowd-majority" else rate,
                              annotations=frame["annotator_labels"], random_state=random_state)
    except InvalidInputError:
        return
    for i in np.flatnonzero(result.is_noisy):
        gave = {a["label"] for a in frame["annotator_labels"][i]}
        assert result.labels[i] in gave


@SETTINGS
@given(seed=st.integers(0, 10_000), rate=st.floats(0.0, 0.25),
       share=st.sampled_from([0.5, 0.8, 0.9]), n_splits=st.integers(1, 3))
def test_recipe_rates_per_split_and_overall(seed, rate, share, n_splits):
    frame = random_crowd(seed, n_items=60, per_item=5, accuracy=0.6)
    split = np.arange(60) % n_splits
    recipe = {"dissenting-worker": share, "dissenting-label": round(1 - share, 10)}
    try:
        result = inject_noise(frame["gold"], recipe=recipe, rate=rate, split=split,
                              classes=["c0", "c1", "c2"],
                              annotations=frame["annotator_labels"], random_state=seed)
    except InvalidInputError:
        return
    total = target_count(rate, 60)
    assert result.n_noisy == total
    for s in range(n_splits):
        exact = rate * (split == s).sum()
        assert np.floor(exact) - 1e-9 <= result.is_noisy[split == s].sum() <= np.ceil(exact) + 1e-9
    worker = int((result.noise_method == "dissenting-worker").sum())
    assert abs(worker - share * total) < 1 + 1e-9


def test_properties_module_is_collected():
    # guards against the hypothesis tests silently collecting nothing
    assert set(ALL_METHODS) == set(NOISE_METHODS) - set(CAP_ONLY)
    assert set(CROWD_METHODS) <= set(ALL_METHODS)
    with pytest.raises(InvalidInputError):
        _run("dissenting-label", 0, 0.9, accuracy=1.0)
