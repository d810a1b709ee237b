"""The model ladder of ``impact --train``: its rungs, and predictions from the TF-IDF ones."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from labelaudit._errors import InvalidParameterError
from labelaudit.impact import ladder_predictions, measure_impact, model_ladder

WORDS = {"pos": ["good", "great", "fine", "lovely"], "neg": ["bad", "awful", "poor", "sad"]}


def texts(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    labels = rng.choice(["pos", "neg"], size=n)
    text = [" ".join(rng.choice(WORDS[y], size=3)) + " film" for y in labels]
    return pd.DataFrame({"id": np.arange(n) + 100 * seed, "text": text, "label": labels})


def test_ladder_rungs():
    names = [m.name for m in model_ladder(["tfidf", "embed"])]
    assert names == ["tfidf-C0.01", "tfidf-C0.1", "tfidf-C1", "tfidf-C10", "tfidf-C100",
                     "embed-C1"]
    assert [m.scorer for m in model_ladder("tfidf")] == ["tfidf"] * 5
    with pytest.raises(InvalidParameterError, match="choose from tfidf, embed, finetune"):
        model_ladder(["bert"])


def test_tfidf_ladder_predicts_every_item():
    train, test = texts(60, 1), texts(20, 2)
    preds = ladder_predictions(train, test, text="text", members=["tfidf"])
    assert list(preds) == [m.name for m in model_ladder(["tfidf"])]
    for frame in preds.values():
        assert frame["id"].tolist() == test["id"].tolist()
        assert set(frame["predicted_label"]) <= {"pos", "neg"}
    assert (preds["tfidf-C100"]["predicted_label"] == test["label"]).mean() > 0.9
    # and impact takes them as they are
    table = test.assign(corrected=test["label"], flagged=False)
    table.loc[:2, "flagged"] = True
    table.loc[:1, "corrected"] = table.loc[:1, "label"].map({"pos": "neg", "neg": "pos"})
    result = measure_impact(table, preds)
    assert (result.n_benign, result.n_correctable, result.n_unknown) == (18, 2, 0)
    assert len(result.models) == 5
