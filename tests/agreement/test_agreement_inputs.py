"""Long and nested annotation input, and the errors bad input gets."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from labelaudit import InvalidInputError, InvalidParameterError
from labelaudit.agreement import annotation_counts
from labelaudit.io import nested_to_long, to_annotations


def test_long_format_aliases_and_counts():
    df = pd.DataFrame(
        {"task": ["t1", "t1", "t2", "t2", "t2"], "worker": ["a", "b", "a", "b", "c"],
         "label": ["pos", "neg", "neg", "neg", "pos"]}
    )
    ann = to_annotations(df)
    assert ann.items.tolist() == ["t1", "t2"]
    assert ann.annotators.tolist() == ["a", "b", "c"]
    assert ann.classes == ("neg", "pos")
    assert ann.counts().tolist() == [[1, 1], [2, 1]]
    back = ann.to_frame()
    assert list(back.columns) == ["item", "annotator", "label"]
    assert back["label"].tolist() == df["label"].tolist()


def test_explicit_column_names_and_missing_annotations_dropped():
    df = pd.DataFrame(
        {"item_id": [1, 1, 1, 2, 2], "rater_x": ["u", "v", "w", "u", "v"],
         "answer": [0.0, 1.0, np.nan, 1.0, 1.0]}
    )
    ann = to_annotations(df, item="item_id", annotator="rater_x", label="answer")
    assert ann.classes == (0, 1)  # integral floats come back as ints
    assert ann.counts().tolist() == [[1, 1], [0, 2]]
    with pytest.raises(InvalidInputError, match="no label column 'nope'"):
        to_annotations(df, item="item_id", label="nope")


def test_items_with_different_numbers_of_annotations():
    rng = np.random.default_rng(0)
    rows = []
    for i in range(20):
        for j in range(int(rng.integers(2, 7))):
            rows.append((i, f"w{j}", int(rng.integers(0, 3))))
    df = pd.DataFrame(rows, columns=["item", "annotator", "label"])
    counts = annotation_counts(df)
    assert counts.to_numpy().sum(axis=1).tolist() == df.groupby("item").size().tolist()


def test_nested_plain_labels_dicts_and_json_strings():
    frame = pd.DataFrame(
        {
            "id": ["a", "b", "c"],
            "votes": [
                ["x", "y", "x"],
                [{"worker": "w1", "label": "y"}, {"worker": "w2", "label": "y"}],
                '[{"worker": "w1", "label": "x"}, {"worker": "w3", "label": "y"}]',
            ],
        }
    )
    long = nested_to_long(frame, item="id", annotations="votes")
    assert long["item"].tolist() == ["a", "a", "a", "b", "b", "c", "c"]
    assert long["annotator"].tolist() == [None, None, None, "w1", "w2", "w1", "w3"]
    # some annotations with ids, some without: refused
    with pytest.raises(InvalidInputError, match="annotator id or none at all"):
        to_annotations(long)
    plain = nested_to_long(frame.iloc[:1], item="id", annotations="votes")
    assert to_annotations(plain).annotators is None


@pytest.mark.parametrize(
    "cell, match",
    [("x, y", "not a list"), ("[1, 2", "not a valid JSON list"), (5, "not a list"),
     ([{"worker": "a"}], "no label key")],
)
def test_nested_bad_cells(cell, match):
    frame = pd.DataFrame({"id": [1], "votes": [cell]})
    with pytest.raises(InvalidInputError, match=match):
        nested_to_long(frame, item="id", annotations="votes")


def test_mixed_label_types_error_names_rows():
    df = pd.DataFrame({"item": [1, 1, 2, 2], "label": ["yes", 1, "no", "yes"]})
    with pytest.raises(InvalidInputError, match="mixed.*row 1"):
        to_annotations(df)


def test_empty_and_all_missing_and_unknown_columns():
    with pytest.raises(InvalidInputError, match="empty"):
        to_annotations(pd.DataFrame({"item": [], "label": []}))
    with pytest.raises(InvalidInputError, match="missing"):
        to_annotations(pd.DataFrame({"item": [1, 2], "label": [None, None]}))
    with pytest.raises(InvalidInputError, match="cannot find the item and label"):
        to_annotations(pd.DataFrame({"a": [1], "b": [2]}))
    with pytest.raises(InvalidParameterError):
        to_annotations([("a", "b", "c")])


def test_duplicate_item_annotator_pair_rejected():
    df = pd.DataFrame({"item": [1, 1, 1], "annotator": ["a", "a", "b"], "label": [0, 1, 0]})
    with pytest.raises(InvalidInputError, match="more than once"):
        to_annotations(df)
