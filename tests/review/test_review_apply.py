"""``apply_verdicts``: a corrected copy with provenance, never in place."""

from __future__ import annotations

import pandas as pd
import pytest

from labelaudit import InvalidInputError, InvalidParameterError
from labelaudit.review import apply_verdicts


@pytest.fixture
def data():
    return pd.DataFrame({"id": [10, 11, 12, 13, 14, 15],
                         "text": ["a", "b", "c", "d", "e", "f"],
                         "label": ["x", "x", "y", "y", "x", "y"]})


@pytest.fixture
def verdicts():
    return pd.DataFrame({
        "id": [10, 11, 12, 13, 14],
        "verdict": ["Correctable", "Non-Error", "Non-Agreement", "Correctable", "Pending"],
        "majority_label": ["y", "x", None, "none of these", None],
        "votes": ["y:3; x:2", "x:4; y:1", "x:2; y:2; unsure:1", "none of these:3", "x:1"],
    })


@pytest.mark.parametrize(("policy", "kept_ids", "actions"), [
    ("flag", [10, 11, 12, 13, 14, 15],
     ["relabelled", "confirmed", "flagged", "flagged", "pending", ""]),
    ("keep", [10, 11, 12, 13, 14, 15],
     ["relabelled", "confirmed", "kept", "kept", "pending", ""]),
    ("drop", [10, 11, 14, 15], ["relabelled", "confirmed", "pending", ""]),
])
def test_policies(data, verdicts, policy, kept_ids, actions):
    before = data.copy()
    out = apply_verdicts(data, verdicts, non_agreement=policy)
    pd.testing.assert_frame_equal(data, before)  # the input is not touched
    assert out["id"].tolist() == kept_ids
    assert out["review_action"].tolist() == actions
    first = out.set_index("id")
    assert first.loc[10, "label"] == "y" and first.loc[10, "review_original_label"] == "x"
    assert first.loc[11, "label"] == "x"
    assert first.loc[10, "review_votes"] == "y:3; x:2"
    assert first.loc[15, "review_verdict"] == ""
    assert list(out.columns[:3]) == ["id", "text", "label"]


def test_integer_labels_keep_their_type():
    data = pd.DataFrame({"id": ["a", "b"], "text": ["t", "u"], "label": [0, 1]})
    # a verdicts file read back from CSV: majority labels as floats
    verdicts = pd.DataFrame({"id": ["a", "b"], "verdict": ["Correctable", "Non-Error"],
                             "majority_label": [1.0, 1.0]})
    out = apply_verdicts(data, verdicts)
    assert out["label"].tolist() == [1, 1]
    assert out["label"].dtype == data["label"].dtype


def test_row_numbers_as_ids():
    data = pd.DataFrame({"text": ["t", "u", "v"], "label": ["x", "x", "x"]})
    verdicts = pd.DataFrame({"id": [2], "verdict": ["Correctable"], "majority_label": ["y"]})
    out = apply_verdicts(data, verdicts, id=None)
    assert out["label"].tolist() == ["x", "x", "y"]


@pytest.mark.parametrize(("change_data", "change_verdicts", "match"), [
    (lambda d: d, lambda v: v.assign(id=[10, 11, 12, 13, 99]), "ids the dataset does not have"),
    (lambda d: d.assign(id=[10, 10, 12, 13, 14, 15]), lambda v: v, "duplicate ids"),
    (lambda d: d, lambda v: v.assign(id=[10, 10, 12, 13, 14]), "duplicate ids"),
    (lambda d: d, lambda v: v.drop(columns="verdict"), "lacks"),
    (lambda d: d, lambda v: v.assign(verdict="Wrong"), "unknown verdicts"),
    (lambda d: d.drop(columns="label"), lambda v: v, "lacks column"),
    (lambda d: d.assign(review_verdict=""), lambda v: v, "corrected already"),
])
def test_errors(data, verdicts, change_data, change_verdicts, match):
    with pytest.raises(InvalidInputError, match=match):
        apply_verdicts(change_data(data), change_verdicts(verdicts))


def test_bad_policy(data, verdicts):
    with pytest.raises(InvalidParameterError):
        apply_verdicts(data, verdicts, non_agreement="delete")
