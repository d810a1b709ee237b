"""Issue #11: annotations and items left out are counted, never dropped without a word."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from labelaudit._errors import InvalidInputError, InvalidParameterError
from labelaudit.agreement import (
    agreement_report,
    chance_difference,
    noise_bound,
    read_annotation_file,
)
from labelaudit.io import DroppedAnnotationsWarning, to_annotations


def _votes(n_items: int = 10) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    return pd.DataFrame({"item": np.repeat(np.arange(n_items), 3),
                         "annotator": np.tile(["a", "b", "c"], n_items),
                         "label": rng.choice(["x", "y"], 3 * n_items).astype(object)})


def test_to_annotations_counts_dropped_empty_labels():
    df = _votes()
    df.loc[[0, 1, 2, 4], "label"] = [None, np.nan, "  ", ""]  # item 0 loses all three
    with pytest.warns(DroppedAnnotationsWarning) as caught:
        ann = to_annotations(df)
    assert len(caught) == 1
    assert str(caught[0].message) == (
        "dropped 4 of 30 annotations with an empty label in column 'label' (rows 0, 1, 2, 4); "
        "1 of 10 items has no label left (item 0)")
    assert ann.counts().sum() == 26 and "" not in ann.classes and "  " not in ann.classes


def test_to_annotations_is_silent_when_nothing_is_dropped():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        to_annotations(_votes())


def test_nothing_left_is_a_clear_error():
    df = _votes(2)
    df["label"] = ""
    with pytest.raises(InvalidInputError, match="all 6 annotations have an empty or missing"):
        to_annotations(df)


def test_drop_single_counts_the_items_it_drops():
    df = _votes()
    df = df[~((df["item"] == 3) & (df["annotator"] != "a"))]
    with pytest.warns(DroppedAnnotationsWarning, match=r"dropped 1 of 10 items with fewer "
                      r"than 2 annotations \(item 3\)"):
        report = agreement_report(df, n_bootstrap=0, drop_single=True)
    assert report.n_items == 9


def test_nested_file_counts_empty_lists(tmp_path):
    path = tmp_path / "crowd.jsonl"
    path.write_text("".join(
        f'{{"id": "q{i}", "annotator_labels": {["x", "y", "x"] if i % 3 else []}}}\n'.replace(
            "'", '"') for i in range(9)))
    with pytest.warns(DroppedAnnotationsWarning, match="dropped 3 of 9 items with no annotation"):
        data = read_annotation_file(path)
    assert data.nested_column == "annotator_labels" and data.long["item"].nunique() == 6


def test_chance_difference_delta_larger_than_n_is_refused():
    with pytest.raises(InvalidParameterError, match=r"delta \(901\) cannot exceed n_items"):
        chance_difference(900, n_noise=125, delta=-901)
    assert chance_difference(900, n_noise=125, delta=900).delta == 900


def test_counts_print_plainly_not_as_numpy_reprs():
    with pytest.raises(InvalidParameterError) as exc:
        noise_bound(np.float64(2.5), 1, 0.5)
    assert str(exc.value) == "n_items must be a whole number, got 2.5"
