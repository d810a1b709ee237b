"""TrainedModel.predict_table, the table `labelaudit predict` writes; read_eval_table with
the training data, the check of `labelaudit train --eval`."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from tests.conftest import make_topic_frame

import labelaudit
import labelaudit.training
from labelaudit._errors import InvalidInputError


@pytest.fixture(scope="module")
def model(tiny_st_dir):
    return labelaudit.training.train(make_topic_frame(10), text="text", label="label",
                            model=str(tiny_st_dir), epochs=5)


def test_the_top_labels_with_their_probabilities(model, tmp_path):
    test = make_topic_frame(3, seed=1)
    table = model.predict_table(test, top_k=2)
    assert list(table.columns) == ["id", "label_1", "prob_1", "label_2", "prob_2"]
    assert table["id"].tolist() == test["id"].tolist()
    probs = model.predict_proba(test)
    np.testing.assert_allclose(table["prob_1"], probs.max(axis=1))
    assert (table["label_1"] == model.predict(test)).all()
    everything = model.predict_table(test.drop(columns="id"), top_k=9)
    assert everything["id"].tolist() == list(range(9)) and "label_3" in everything
    assert "label_4" not in everything


def test_a_missing_id_column_is_named_with_the_file(model, tmp_path):
    path = tmp_path / "items.csv"
    make_topic_frame(2).to_csv(path, index=False)
    with pytest.raises(InvalidInputError, match=r"id='key': .*items.csv has no such column"):
        model.predict_table(str(path), id="key")
    assert len(model.predict_table(pd.read_csv(path), id="text")) == 6


def test_an_evaluation_table_must_hold_the_training_data_s_kind_of_labels(tmp_path):
    import warnings

    from labelaudit._errors import InvalidParameterError
    from labelaudit.io import OverlapWarning
    from labelaudit.training import read_eval_table

    plain, sets = tmp_path / "plain.csv", tmp_path / "sets.jsonl"
    make_topic_frame(2).to_csv(plain, index=False)
    pd.DataFrame({"text": ["a", "b"], "label": [["x"], ["x", "y"]]}).to_json(
        sets, orient="records", lines=True)
    # the training data: copies (the same file is refused as an evaluation table)
    plain_train, sets_train = tmp_path / "plain_train.csv", tmp_path / "sets_train.jsonl"
    plain_train.write_bytes(plain.read_bytes())
    sets_train.write_bytes(sets.read_bytes())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OverlapWarning)  # copies: every item is seen
        assert len(read_eval_table(plain, training=plain_train)) == 6
        assert len(read_eval_table(sets, training=sets_train, label_sets=True)) == 2
        with pytest.raises(InvalidParameterError, match="^the evaluation table: its 'label' "
                           "column holds label sets and the training data's one label per "
                           "item"):
            read_eval_table(sets, training=plain_train, label_sets=True)
        with pytest.raises(InvalidParameterError, match="holds one label per item and the"):
            read_eval_table(plain, training=sets_train, label_sets=True)
        assert len(read_eval_table(plain, training=plain_train, label_sep="|",
                                   label_sets=True)) == 6
