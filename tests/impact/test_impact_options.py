"""check_impact_options: predictions given or fitted, table options apart from token ones."""

from __future__ import annotations

import pytest

from labelaudit._errors import InvalidParameterError
from labelaudit.impact import check_impact_options


def test_given_predictions_fit_nothing():
    assert check_impact_options("c.csv", predictions=[("a", "a.csv"), ("b", "b.csv")]) is None
    with pytest.raises(InvalidParameterError, match=r"given twice in predictions=: \['a'\]"):
        check_impact_options("c.csv", predictions=[("a", "a.csv"), ("a", "b.csv")])
    with pytest.raises(InvalidParameterError, match="^members= goes with train="):
        check_impact_options("c.csv", predictions=[("a", "a.csv")], members=["tfidf"])
    with pytest.raises(InvalidParameterError, match="give predictions= or train=, not both"):
        check_impact_options("c.csv", predictions=[("a", "a.csv")], train="t.csv")


def test_the_ladder_fitted_on_train_is_of_the_data_s_kind():
    assert check_impact_options("c.csv", train="t.csv", text="text",
                                members=["embed"]) == ["embed"]
    assert check_impact_options("c.csv", train="t.conll", original="o.conll") == [
        "encoder", "finetune"]
    with pytest.raises(InvalidParameterError, match="^members=encoder does not go with tables"):
        check_impact_options("c.csv", train="t.csv", text="text", members=["encoder"])
    with pytest.raises(InvalidParameterError, match="train= needs text="):
        check_impact_options("c.csv", train="t.csv")
    with pytest.raises(InvalidParameterError, match="^give predictions=NAME=FILE or train=FILE$"):
        check_impact_options("c.conll", original="o.conll")


def test_options_of_one_kind_of_data_are_refused_with_the_other():
    with pytest.raises(InvalidParameterError, match="^label=, text= go with tables"):
        check_impact_options("c.conll", original="o.conll", label="x", text="t")
    with pytest.raises(InvalidParameterError, match="looks like a tagged"):
        check_impact_options("c.conll", predictions=[("a", "a.csv")])
    with pytest.raises(InvalidParameterError, match="^scheme= and tag_column= go with token"):
        check_impact_options("c.csv", predictions=[("a", "a.csv")], tag_column=2)
