"""What `labelaudit noise` does, from Python: noise a table, write it, describe it."""

from __future__ import annotations

import json
import typing

import numpy as np
import pandas as pd
import pytest

from labelaudit import InvalidInputError, InvalidParameterError
from labelaudit.noise import (
    NOISE_METHODS,
    inject_noise,
    inject_noise_table,
    measure_noise_realism,
    read_noise_matrix,
    read_noise_sources,
)
from labelaudit.noise._class_dependent import random_noise_matrix
from labelaudit.noise._inject import NoiseMethod


def _frame(n: int = 40) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    return pd.DataFrame({"id": [f"q{i}" for i in range(n)],
                         "text": [f"item {i}" for i in range(n)],
                         "gold": rng.choice(["yes", "no", "maybe"], n)},
                        index=np.arange(100, 100 + n))  # not a range index from 0


def test_the_literal_names_the_methods():
    assert typing.get_args(NoiseMethod) == tuple(NOISE_METHODS)


def test_apply_to_adds_the_columns_row_for_row():
    frame = _frame()
    result = inject_noise_table(frame, label="gold", id="id", method="uniform", rate=0.25,
                                random_state=3)
    noisy = result.apply_to(frame, label="gold")
    assert list(noisy.columns) == ["id", "text", "gold", "clean_label", "is_noisy",
                                   "noise_method"]
    assert noisy["is_noisy"].sum() == 10 and (noisy.index == frame.index).all()
    assert ((noisy["gold"] != noisy["clean_label"]) == noisy["is_noisy"]).all()
    assert (noisy["clean_label"] == frame["gold"]).all()
    with pytest.raises(InvalidInputError, match="40 labels were noised"):
        result.apply_to(frame.head(5), label="gold")


def test_swapped_texts_are_kept_beside_the_new_ones():
    frame = _frame(12)
    embeddings = np.random.default_rng(1).normal(size=(12, 4))
    result = inject_noise(frame["gold"], method="instance-dependent", rate=0.25,
                          embeddings=embeddings, texts=frame["text"].tolist(), swap_input=True,
                          ids=frame["id"])
    noisy = result.apply_to(frame, label="gold", text="text")
    swapped = noisy[noisy["is_noisy"]]
    assert len(swapped) == 3 and (swapped["text"] != swapped["clean_text"]).all()
    assert set(swapped["text_from"]) <= set(frame["id"])
    assert noisy.loc[~noisy["is_noisy"], "text_from"].isna().all()


def test_table_inputs_are_checked():
    frame = _frame()
    with pytest.raises(InvalidInputError, match="missing column 'nope'"):
        inject_noise_table(frame, label="nope", method="uniform", rate=0.1)
    with pytest.raises(InvalidInputError, match="is it noised already"):
        inject_noise_table(frame.assign(is_noisy=False), label="gold", method="uniform",
                           rate=0.1)
    with pytest.raises(InvalidInputError, match="duplicate ids"):
        inject_noise_table(frame.assign(id="same"), label="gold", id="id", method="uniform",
                           rate=0.1)
    with pytest.raises(InvalidParameterError, match="needs text=COLUMN"):
        inject_noise_table(frame, label="gold", method="instance-dependent", rate=0.1)


def test_crowd_column_or_long_table():
    rng = np.random.default_rng(2)
    frame = _frame(20)
    votes = [[{"worker": f"w{w}", "label": g if rng.random() < 0.6 else "maybe"}
              for w in range(3)] for g in frame["gold"]]
    nested = frame.assign(votes=votes)
    by_column = inject_noise_table(nested, label="gold", id="id", annotations="votes",
                                   method="dissenting-worker", rate=0.1)
    long = pd.DataFrame([{"item_id": i, "annotator_id": v["worker"], "label": v["label"]}
                         for i, notes in zip(frame["id"], votes, strict=True) for v in notes])
    by_table = inject_noise_table(frame, label="gold", id="id", annotations=long,
                                  method="dissenting-worker", rate=0.1)
    assert np.array_equal(by_column.labels, by_table.labels)


def test_files_of_matrix_and_sources(tmp_path):
    (tmp_path / "m.json").write_text(json.dumps({"yes": {"yes": 0, "no": 1.0}, "no": {"no": 1.0},
                                                 "maybe": {"maybe": 1.0}}))
    matrix = read_noise_matrix(tmp_path / "m.json")
    result = inject_noise_table(_frame(), label="gold", method="class-dependent", rate=0.1,
                                noise_matrix=matrix)
    assert set(result.clean_labels[result.is_noisy]) == {"yes"}
    pd.DataFrame([[0.5, 0.5], [0.0, 1.0]], index=["a", "b"], columns=["a", "b"]).to_csv(
        tmp_path / "m.csv")
    assert read_noise_matrix(tmp_path / "m.csv").to_numpy().tolist() == [[0.5, 0.5], [0, 1]]
    (tmp_path / "s.json").write_text(json.dumps({"yes": "S1", "no": 2}))
    assert read_noise_sources(tmp_path / "s.json") == {"yes": "S1", "no": "2"}
    with pytest.raises(InvalidParameterError, match="not CLASS=SOURCE"):
        read_noise_sources("yes=S1,no")
    with pytest.raises(InvalidInputError, match="no such noise-matrix file"):
        read_noise_matrix(tmp_path / "missing.csv")


def test_record_and_description():
    with pytest.warns(UserWarning, match="every item is noised"):
        result = inject_noise(["a", "b", "c", "a"] * 10, method="uniform", rate=0.999)
    record = result.to_dict()
    assert (record["n_requested"], record["n_noisy"], record["achieved_rate"]) == (40, 40, 1.0)
    json.dumps(record)
    text = result.summary()
    assert text.splitlines()[0] == ("noised 40 of 40 items with uniform (requested rate 0.999 "
                                    "-> 40 items; achieved rate 1.0000)")
    assert "achieved noise matrix (row = clean label, column = noisy label):" in text


def test_summary_names_a_large_noise_matrix_instead_of_printing_it():
    labels = [f"class{k}" for k in range(25)] * 4
    result = inject_noise(labels, method="uniform", rate=0.2)
    text = result.summary()
    assert "achieved noise matrix: 25 x 25 classes, not shown" in text
    assert len(text.splitlines()) < 40 and result.noise_matrix.shape == (25, 25)


def test_random_noise_matrix_is_cleanlabs_transposed():
    from labelaudit.detect._cleanlab import import_cleanlab

    generation = import_cleanlab("cleanlab.benchmarking.noise_generation")
    state = np.random.get_state()  # noqa: NPY002 - the test checks the global state is kept
    for n_classes, rate in [(2, 0.1), (3, 0.3), (7, 0.05), (20, 0.6)]:
        ours = random_noise_matrix(n_classes, rate, np.random.default_rng(n_classes))
        seed = int(np.random.default_rng(n_classes).integers(2**32 - 1))
        theirs = generation.generate_noise_matrix_from_trace(
            n_classes, n_classes * (1 - rate), max_trace_prob=1 - rate / 2,
            valid_noise_matrix=False, seed=seed)
        np.testing.assert_allclose(ours, theirs.T)
        np.testing.assert_allclose(ours.sum(axis=1), 1)
        assert np.trace(ours) == pytest.approx(n_classes * (1 - rate))
        assert (np.diag(ours) < 1).all()  # every class can be noised
    np.random.set_state(state)  # noqa: NPY002
    before = np.random.get_state()[1].copy()  # noqa: NPY002
    random_noise_matrix(4, 0.2, np.random.default_rng(0))
    assert np.array_equal(np.random.get_state()[1], before)  # noqa: NPY002 - kept
    assert np.array_equal(random_noise_matrix(3, 0.0, np.random.default_rng(0)), np.eye(3))


def test_measure_noise_realism_of_a_table():
    rng = np.random.default_rng(0)
    words = {"sport": ["goal", "team", "match"], "food": ["pasta", "soup", "chef"]}
    frame = pd.DataFrame([{"text": " ".join(rng.choice(words[c], size=3)) + f" {i}",
                           "label": c} for i, c in enumerate(["sport", "food"] * 20)])
    noisy = inject_noise_table(frame, method="uniform", rate=0.2).apply_to(frame)
    result = measure_noise_realism(noisy, scorers=["tfidf"], n_folds=3)
    assert result.to_frame()["method"].tolist() == ["uniform"]
    flagged = measure_noise_realism(noisy.drop(columns="noise_method"), scorers=["tfidf"],
                                    n_folds=3)
    assert flagged.methods == ["is_noisy"]
    with pytest.raises(InvalidInputError, match="noise_column=COLUMN"):
        measure_noise_realism(frame, scorers=["tfidf"])
