"""One crowd-label type: Annotations encoded against a dataset's rows, and its views."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from labelaudit import InvalidInputError, InvalidParameterError
from labelaudit.detect import annotation_matrix
from labelaudit.io import Annotations, to_annotations

CLASSES = np.array(["a", "b", "c"])


def _nested():
    return [
        [{"worker": "u", "label": "a"}, {"worker": "v", "label": "b"}],
        [],
        [{"worker": "w", "label": "c"}, {"worker": "u", "label": "c"}],
    ]


def test_rows_encoding_of_nested_lists():
    ann = to_annotations(_nested(), ids=np.array([10, 11, 12]), classes=CLASSES)
    assert isinstance(ann, Annotations)
    assert ann.items.tolist() == [10, 11, 12]  # every row, in row order, even without labels
    assert ann.classes == ("a", "b", "c")
    assert ann.item_codes.tolist() == [0, 0, 2, 2]
    assert ann.label_codes.tolist() == [0, 1, 2, 2]
    assert ann.annotator_codes.tolist() == [0, 1, 2, 0] and ann.n_annotators == 3
    assert ann.counts().tolist() == [[1, 1, 0], [0, 0, 0], [0, 0, 2]]
    matrix = ann.to_matrix()
    assert matrix.shape == (3, 3)
    np.testing.assert_array_equal(
        matrix, [[0, 1, np.nan], [np.nan] * 3, [2, np.nan, 2]])


def test_rows_encoding_of_a_long_table_matches_nested():
    long = pd.DataFrame({"item_id": [12, 10, 10, 12], "annotator_id": ["w", "u", "v", "u"],
                         "label": ["c", "a", "b", "c"]})
    ann = to_annotations(long, ids=np.array([10, 11, 12]), classes=CLASSES)
    nested = to_annotations(_nested(), ids=np.array([10, 11, 12]), classes=CLASSES)
    np.testing.assert_array_equal(ann.counts(), nested.counts())
    assert ann.item_codes.tolist() == [2, 0, 0, 2]
    assert ann.label_codes.tolist() == [2, 0, 1, 2]


def test_rows_encoding_keeps_the_dataset_class_order():
    ann = to_annotations([["b"], ["a", "b"]], ids=np.arange(2), classes=np.array(["b", "a"]))
    assert ann.classes == ("b", "a") and ann.n_annotators == 0
    assert ann.counts().tolist() == [[1, 0], [1, 1]]
    np.testing.assert_array_equal(ann.to_matrix(), [[0, np.nan], [1, 0]])


def test_rows_encoding_errors():
    with pytest.raises(InvalidParameterError, match="ids and classes together"):
        to_annotations([["a"]], ids=np.arange(1))
    with pytest.raises(InvalidParameterError, match="pass ids= and classes="):
        to_annotations([["a"]])
    with pytest.raises(InvalidInputError, match="outside the label set"):
        to_annotations([["a"], ["z"]], ids=np.arange(2), classes=CLASSES)
    with pytest.raises(InvalidInputError, match="2 entries but there are 3"):
        to_annotations([["a"], ["b"]], ids=np.arange(3), classes=CLASSES)
    long = pd.DataFrame({"item": [7], "label": ["a"]})
    with pytest.raises(InvalidInputError, match="not in the data"):
        to_annotations(long, ids=np.arange(2), classes=CLASSES)


def test_annotation_matrix_is_to_matrix():
    cells = pd.Series(_nested())
    ann = to_annotations(list(cells), ids=np.arange(3), classes=CLASSES)
    with pytest.raises(InvalidInputError, match="items without annotations in row 1"):
        annotation_matrix(cells, CLASSES, np.arange(3))
    cells[1] = [{"worker": "v", "label": "a"}]
    np.testing.assert_array_equal(
        annotation_matrix(cells, CLASSES, np.arange(3)),
        to_annotations(list(cells), ids=np.arange(3), classes=CLASSES).to_matrix())
    assert ann.to_matrix().shape == (3, 3)


def test_no_deprecated_crowd_encoding():
    import labelaudit.noise as noise

    assert not hasattr(noise, "crowd_from_annotations")
