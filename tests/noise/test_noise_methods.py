"""Each noise method on the hand-made crowd table of conftest.py, checked by hand."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from labelaudit import InvalidInputError, InvalidParameterError
from labelaudit.noise import inject_noise, parse_recipe
from labelaudit.noise._class_dependent import check_noise_matrix
from labelaudit.noise._common import allocate, target_count
from labelaudit.noise._crowd_majority import crowd_majority_labels

DISSENTING_ITEMS = {1, 2, 3, 5, 6, 9}


def given(frame: pd.DataFrame) -> dict[int, set[str]]:
    """Labels the annotators gave each item."""
    return {i: {a["label"] for a in notes} for i, notes in enumerate(frame["annotator_labels"])}


def noised(result) -> dict[int, str]:
    return {int(i): str(result.labels[i]) for i in np.flatnonzero(result.is_noisy)}


def test_target_count_and_allocate():
    assert target_count(0.05, 800) == 40
    assert target_count(0.15, 10) == 2  # 1.5 rounds up
    assert target_count(0.0, 10) == 0
    assert allocate(10, [0.8, 0.2]).tolist() == [8, 2]
    assert allocate(7, [1, 1, 1]).tolist() == [3, 2, 2]
    assert allocate(5, [3, 1], caps=[2, 9]).tolist() == [2, 3]
    shares = allocate(40, [267, 267, 266])
    assert shares.sum() == 40 and set(shares.tolist()) <= {13, 14}


def test_uniform_flips_exact_count_to_other_labels(hand_crowd):
    result = inject_noise(hand_crowd["gold"], method="uniform", rate=0.3, random_state=1)
    assert result.n_noisy == 3
    changed = result.labels != result.clean_labels
    assert np.array_equal(changed, result.is_noisy)
    assert set(result.labels.tolist()) <= {"a", "b", "c"}
    assert set(result.noise_method[result.is_noisy]) == {"uniform"}
    assert all(m is None for m in result.noise_method[~result.is_noisy])


def test_dissenting_label_uses_a_disagreeing_annotation(hand_crowd):
    gave = given(hand_crowd)
    for seed in range(5):
        result = inject_noise(hand_crowd["gold"], method="dissenting-label", rate=0.4,
                              annotations=hand_crowd["annotator_labels"], random_state=seed)
        flips = noised(result)
        assert len(flips) == 4
        assert set(flips) <= DISSENTING_ITEMS
        for item, label in flips.items():
            assert label in gave[item] and label != hand_crowd["gold"][item]
    # item 2 has a single dissenting label, c
    all_six = inject_noise(hand_crowd["gold"], method="dissenting-label", rate=0.6,
                           annotations=hand_crowd["annotator_labels"])
    assert set(noised(all_six)) == DISSENTING_ITEMS and noised(all_six)[2] == "c"


def test_dissenting_label_too_high_rate_says_what_is_possible(hand_crowd):
    with pytest.raises(InvalidInputError, match=r"at most 6 of the 10 items.*needs 7.*rate 0\.6"):
        inject_noise(hand_crowd["gold"], method="dissenting-label", rate=0.7,
                     annotations=hand_crowd["annotator_labels"])


def _explained_by_whole_workers(frame: pd.DataFrame, flips: dict[int, str]) -> bool:
    """True when some order of the workers, applying all their dissents (the last one
    partly), produces exactly ``flips``."""
    gold = frame["gold"].tolist()
    dissents: dict[str, dict[int, str]] = {}
    for item, notes in enumerate(frame["annotator_labels"]):
        for note in notes:
            if note["label"] != gold[item]:
                dissents.setdefault(note["worker"], {})[item] = note["label"]
    for order in itertools.permutations(sorted(dissents)):
        taken: dict[int, str] = {}
        for worker in order:
            fresh = {i: lab for i, lab in dissents[worker].items() if i not in taken}
            if len(taken) + len(fresh) <= len(flips):
                taken.update(fresh)
            else:  # the last worker: a subset of their fresh dissents
                rest = {i: lab for i, lab in flips.items() if i not in taken}
                if all(fresh.get(i) == lab for i, lab in rest.items()):
                    taken.update(rest)
            if len(taken) == len(flips):
                break
        if taken == flips:
            return True
    return False


@pytest.mark.parametrize("rate", [0.1, 0.2, 0.3, 0.5])
def test_dissenting_worker_applies_whole_workers(hand_crowd, rate):
    for seed in range(4):
        result = inject_noise(hand_crowd["gold"], method="dissenting-worker", rate=rate,
                              annotations=hand_crowd["annotator_labels"], random_state=seed)
        flips = noised(result)
        assert len(flips) == target_count(rate, 10)
        assert _explained_by_whole_workers(hand_crowd, flips)


def test_whole_worker_check_can_fail(hand_crowd):
    # no annotator gave item 3 the label c
    assert not _explained_by_whole_workers(hand_crowd, {3: "c"})
    # w1-w3 dissent on items 3 and 5, w4 and w5 on 1 but never on 3: picking items 1 and 3
    # is what dissenting-label may do, never dissenting-worker
    assert not _explained_by_whole_workers(hand_crowd, {1: "b", 3: "a"})
    assert _explained_by_whole_workers(hand_crowd, {3: "a", 5: "a"})


def test_dissenting_worker_needs_worker_ids(hand_crowd):
    plain = [[a["label"] for a in notes] for notes in hand_crowd["annotator_labels"]]
    with pytest.raises(InvalidInputError, match="needs annotator ids"):
        inject_noise(hand_crowd["gold"], method="dissenting-worker", rate=0.1, annotations=plain)
    # dissenting-label does not need them
    assert inject_noise(hand_crowd["gold"], method="dissenting-label", rate=0.1,
                        annotations=plain).n_noisy == 1


def test_crowd_majority_with_hovy_ties(hand_crowd):
    for seed in range(6):
        result = inject_noise(hand_crowd["gold"], method="crowd-majority",
                              annotations=hand_crowd["annotator_labels"], random_state=seed)
        flips = noised(result)
        assert set(flips) == {3, 5}  # item 6's tie includes its final label: kept
        assert flips[3] == "a" and flips[5] in {"a", "b"}
        assert result.rate is None
    capped = inject_noise(hand_crowd["gold"], method="crowd-majority", rate=0.1,
                          annotations=hand_crowd["annotator_labels"])
    assert capped.n_noisy == 1 and set(noised(capped)) <= {3, 5}
    # a cap above what the data gives is no error: the rate is whatever the data gives
    loose = inject_noise(hand_crowd["gold"], method="crowd-majority", rate=0.5,
                         annotations=hand_crowd["annotator_labels"])
    assert loose.n_noisy == 2


def test_crowd_majority_labels_tie_rule():
    counts = np.array([[2, 2, 1], [1, 2, 2], [0, 0, 0]])
    drawn = {int(crowd_majority_labels(np.array([0, 0, 2]), counts,
                                       np.random.default_rng(s))[1]) for s in range(20)}
    assert drawn == {1, 2}
    assert crowd_majority_labels(np.array([0, 0, 2]), counts, np.random.default_rng(0))[0] == 0
    assert crowd_majority_labels(np.array([0, 0, 2]), counts, np.random.default_rng(0))[2] == 2


def test_minority_split_takes_closest_splits_first(hand_crowd):
    one = inject_noise(hand_crowd["gold"], method="minority-split", rate=0.1,
                       annotations=hand_crowd["annotator_labels"])
    assert noised(one) == {6: "b"}  # 2-2: the closest split
    five = noised(inject_noise(hand_crowd["gold"], method="minority-split", rate=0.5,
                               annotations=hand_crowd["annotator_labels"], random_state=3))
    assert set(five) == {1, 3, 5, 6, 9}  # the 4-1 item 2 comes last
    assert five[1] == "b" and five[3] == "a" and five[9] == "a" and five[5] in {"a", "b"}


def test_methods_needing_annotations_say_so(hand_crowd):
    for method in ("dissenting-label", "dissenting-worker", "crowd-majority", "minority-split"):
        with pytest.raises(InvalidInputError, match="needs per-item crowd annotations"):
            inject_noise(hand_crowd["gold"], method=method, rate=0.1)


def test_single_annotations_are_not_a_crowd():
    with pytest.raises(InvalidInputError, match="several annotations per item"):
        inject_noise(["a", "b"], method="crowd-majority", annotations=[["b"], ["a"]])


def test_annotation_labels_outside_the_label_set(hand_crowd):
    notes = [list(n) for n in hand_crowd["annotator_labels"]]
    notes[4] = notes[4] + [{"worker": "w6", "label": "zzz"}]
    with pytest.raises(InvalidInputError, match=r"outside the label set.*'zzz'.*row 4"):
        inject_noise(hand_crowd["gold"], method="dissenting-label", rate=0.1, annotations=notes)


def test_long_format_gives_the_same_noise(hand_crowd):
    long = pd.DataFrame([
        {"item_id": hand_crowd["id"][i], "annotator_id": a["worker"], "label": a["label"]}
        for i, notes in enumerate(hand_crowd["annotator_labels"]) for a in notes
    ])
    for method in ("dissenting-label", "dissenting-worker", "minority-split"):
        nested = inject_noise(hand_crowd["gold"], method=method, rate=0.3, random_state=5,
                              annotations=hand_crowd["annotator_labels"])
        from_long = inject_noise(hand_crowd["gold"], method=method, rate=0.3, random_state=5,
                                 annotations=long, ids=hand_crowd["id"])
        assert nested.labels.tolist() == from_long.labels.tolist()
    with pytest.raises(InvalidInputError, match="not in the data"):
        inject_noise(hand_crowd["gold"], method="dissenting-label", rate=0.1, annotations=long)


def test_class_dependent_follows_a_given_matrix():
    labels = np.repeat(["a", "b", "c"], 20)
    matrix = pd.DataFrame([[0.5, 0.5, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]],
                          index=["a", "b", "c"], columns=["a", "b", "c"])
    result = inject_noise(labels, method="class-dependent", rate=0.1, noise_matrix=matrix)
    assert result.n_noisy == 6
    assert result.transition_counts.tolist() == [[14, 6, 0], [0, 20, 0], [0, 0, 20]]
    assert result.noise_matrix[0].tolist() == [0.7, 0.3, 0.0]
    assert np.array_equal(result.target_matrix, matrix.to_numpy())
    # more than class a holds: an error that says how much is possible
    with pytest.raises(InvalidInputError, match="at most 20 of the 60"):
        inject_noise(labels, method="class-dependent", rate=0.5, noise_matrix=matrix)


def test_class_dependent_split_between_targets():
    labels = np.repeat([0, 1, 2], 100)
    matrix = np.array([[0.7, 0.2, 0.1], [0.0, 0.7, 0.3], [0.3, 0.0, 0.7]])
    result = inject_noise(labels, method="class-dependent", rate=0.3, noise_matrix=matrix)
    assert result.transition_counts.tolist() == [[70, 20, 10], [0, 70, 30], [30, 0, 70]]


def test_class_dependent_random_matrix_is_reported_and_seeded():
    labels = np.repeat(["x", "y", "z"], 30)
    first = inject_noise(labels, method="class-dependent", rate=0.2, random_state=7)
    again = inject_noise(labels, method="class-dependent", rate=0.2, random_state=7)
    other = inject_noise(labels, method="class-dependent", rate=0.2, random_state=8)
    assert np.allclose(first.target_matrix.sum(axis=1), 1)
    assert np.array_equal(first.target_matrix, again.target_matrix)
    assert not np.array_equal(first.target_matrix, other.target_matrix)
    assert first.n_noisy == 18 and np.array_equal(first.labels, again.labels)


def test_bad_noise_matrices():
    with pytest.raises(InvalidParameterError, match="sum to 1"):
        check_noise_matrix(np.array([[0.5, 0.4], [0.0, 1.0]]), np.array([0, 1]))
    with pytest.raises(InvalidParameterError, match="shape"):
        check_noise_matrix(np.eye(3), np.array([0, 1]))
    with pytest.raises(InvalidParameterError, match="no row or column"):
        check_noise_matrix(pd.DataFrame(np.eye(2), index=["a", "b"], columns=["a", "c"]),
                           np.array(["a", "b"]))
    with pytest.raises(InvalidParameterError, match="only used by class-dependent"):
        inject_noise([0, 1], method="uniform", rate=0.1, noise_matrix=np.eye(2))


def test_recipe_tweetnlp5_shares_and_splits(make_crowd):
    frame = make_crowd(0, n_items=200)
    split = np.where(np.arange(200) < 120, "train", "test")
    result = inject_noise(frame["gold"], recipe="dissenting-worker:0.8,dissenting-label:0.2",
                          rate=0.05, annotations=frame["annotator_labels"], split=split)
    summary = result.achieved_rates().set_index(["by", "value"])
    assert summary.loc[("overall", "all"), "n_noisy"] == 10
    assert summary.loc[("method", "dissenting-worker"), "n_noisy"] == 8
    assert summary.loc[("method", "dissenting-label"), "n_noisy"] == 2
    assert summary.loc[("split", "train"), "n_noisy"] == 6
    assert summary.loc[("split", "test"), "n_noisy"] == 4
    per_class = summary.loc["class"]
    assert per_class["n_noisy"].sum() == 10 and per_class["n_items"].sum() == 200


def test_parse_recipe_errors():
    assert parse_recipe({"uniform": 1}) == (("uniform", 1.0),)
    for bad, message in [("uniform:0.5", "sum to 1"), ("magic:1", "unknown noise method"),
                         ("uniform", "METHOD:SHARE"), ("uniform:x", "not a number"),
                         ("uniform:1.5,dissenting-label:-0.5", "positive")]:
        with pytest.raises(InvalidParameterError, match=message):
            parse_recipe(bad)


@pytest.mark.parametrize("rate", [-0.1, 1.0, 1.5, float("nan"), "0.1", True, None])
def test_rate_outside_range(rate):
    with pytest.raises(InvalidParameterError, match=r"rate must be a number in \[0, 1\)"):
        inject_noise(["a", "b"] * 5, method="uniform", rate=rate)


def test_bad_options():
    with pytest.raises(InvalidParameterError, match="exactly one of method and recipe"):
        inject_noise(["a", "b"], rate=0.1)
    with pytest.raises(InvalidParameterError, match="unknown noise method"):
        inject_noise(["a", "b"], method="gaussian", rate=0.1)
    with pytest.raises(InvalidInputError, match="at least two classes"):
        inject_noise(["a", "a"], method="uniform", rate=0.1)
    with pytest.raises(InvalidInputError, match="missing labels"):
        inject_noise(["a", None, "b"], method="uniform", rate=0.1)
    with pytest.raises(InvalidParameterError, match="no source for the classes"):
        inject_noise(["a", "b"], method="uniform", rate=0.1, sources={"a": "SC"})


def test_classes_extend_the_label_set():
    result = inject_noise(["a"] * 10, method="uniform", rate=0.5, classes=["a", "b", "c"],
                          random_state=0)
    assert result.n_noisy == 5 and set(result.labels[result.is_noisy]) <= {"b", "c"}


def test_zero_rate_noises_nothing(hand_crowd):
    result = inject_noise(hand_crowd["gold"], method="dissenting-worker", rate=0.0,
                          annotations=hand_crowd["annotator_labels"])
    assert result.n_noisy == 0 and result.achieved_rate == 0.0
    assert np.array_equal(result.noise_matrix, np.eye(3))


def test_to_frame_and_summary(hand_crowd):
    result = inject_noise(hand_crowd["gold"], method="uniform", rate=0.2,
                          ids=hand_crowd["id"], sources={"a": "S1", "b": "S1", "c": "S2"})
    frame = result.to_frame()
    assert list(frame.columns) == ["id", "label", "clean_label", "is_noisy", "noise_method",
                                   "noise_source"]
    assert frame["id"].tolist() == hand_crowd["id"].tolist()
    summary = result.achieved_rates().set_index(["by", "value"])
    # sources S1 has 6 items and S2 4: 2 noised items split 1 and 1 (1.2 and 0.8)
    assert summary.loc[("source", "S1"), "n_noisy"] == 1
    assert summary.loc[("source", "S2"), "n_noisy"] == 1
    assert summary.loc[("method", "uniform"), "rate"] == pytest.approx(0.2)
