"""A scan of many classes keeps each item's likeliest classes (top_classes) and ranks as the
scan of the dense rows does."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import average_precision_score

from labelaudit import scan
from labelaudit._errors import InvalidParameterError
from labelaudit.cli import main
from labelaudit.detect import TopKProbs
from labelaudit.models import FoldStore


def many_class_frame(n: int = 1200, n_classes: int = 30, seed: int = 0) -> pd.DataFrame:
    """Short texts of their class's keywords (shared across a few classes) and filler,
    5 % of the labels moved to another class (``is_error``)."""
    rng = np.random.default_rng(seed)
    vocab = [f"w{i}" for i in range(400)]
    keywords = rng.choice(len(vocab), size=(n_classes, 4))
    true = rng.integers(n_classes, size=n)
    texts = [" ".join([vocab[k] for k in rng.choice(keywords[c], 2)]
                      + [vocab[j] for j in rng.integers(len(vocab), size=3)])
             for c in true]
    label = true.copy()
    wrong = rng.choice(n, size=n // 20, replace=False)
    label[wrong] = (true[wrong] + rng.integers(1, n_classes, size=len(wrong))) % n_classes
    return pd.DataFrame({"id": [f"r{i}" for i in range(n)], "text": texts,
                         "label": [f"c{c:02d}" for c in label], "is_error": label != true})


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    return many_class_frame()


@pytest.fixture(scope="module")
def scans(frame):
    data = frame.drop(columns=["is_error"])
    return {k: scan(data, top_classes=k, progress=False) for k in (4, 30)}


def _ap(frame: pd.DataFrame, result) -> float:
    return average_precision_score(frame["is_error"], -result.scores[result.rank_by])


def test_the_sparse_scan_ranks_as_the_dense_one(frame, scans):
    sparse, dense = scans[4], scans[30]
    assert isinstance(sparse.pred_probs, TopKProbs) and isinstance(dense.pred_probs, np.ndarray)
    assert all(isinstance(p, TopKProbs) for p in sparse.member_probs.values())
    assert sparse.pred_probs.classes.shape == (len(frame), 4)
    assert _ap(frame, dense) > 0.5  # a ranking worth comparing
    assert abs(_ap(frame, sparse) - _ap(frame, dense)) < 0.02
    # the ranked lists agree at the top; the flags and the error count nearly
    top = len(frame) // 20
    first = set(np.argsort(sparse.scores["ensemble"])[:top])
    assert len(first & set(np.argsort(dense.scores["ensemble"])[:top])) >= 0.9 * top
    assert abs(sparse.n_issues_estimate - dense.n_issues_estimate) <= 0.1 * top + 2
    np.testing.assert_allclose(sparse.scores["loss"], dense.scores["loss"], atol=0.05)


def test_the_sparse_output_has_every_column(scans):
    sparse, dense = scans[4], scans[30]
    out, ref = sparse.to_frame(), dense.to_frame()
    assert list(out.columns) == list(ref.columns)
    flagged = out[out["flagged"]]
    assert flagged["evidence"].notna().all() and len(flagged) > 0
    assert (flagged["suggested_label"] != flagged["label"]).all()
    same = ref.set_index("id").loc[out["id"], "suggested_label"].to_numpy()
    assert np.mean(same == out["suggested_label"].to_numpy()) > 0.97
    assert 0 < sparse.accuracy <= 1 and abs(sparse.accuracy - dense.accuracy) < 0.01
    assert "each item's 4 likeliest of 30 classes" in sparse.summary()
    assert "likeliest" not in dense.summary()
    assert sparse.explain(out["id"].iloc[0])["toward"] == out["suggested_label"].iloc[0]


def test_more_classes_than_kept_switch_to_the_sparse_rows_by_themselves(monkeypatch, frame):
    import labelaudit.detect._topk as topk

    monkeypatch.setattr(topk, "DENSE_CLASSES", 20)
    result = scan(frame.drop(columns=["is_error"]).head(400), scorers=["tfidf"],
                  progress=False, evidence=False)
    assert isinstance(result.pred_probs, TopKProbs)


def test_top_classes_is_checked_and_refused_with_your_probabilities(frame):
    data = frame.drop(columns=["is_error"]).head(200)
    with pytest.raises(InvalidParameterError, match="top_classes"):
        scan(data, top_classes=1)
    probs = np.full((200, 30), 1 / 30)
    with pytest.raises(InvalidParameterError, match="top_classes"):
        scan(data, pred_probs=probs, classes=sorted(data["label"].unique()), top_classes=5)


def test_the_cli_keeps_the_top_classes(tmp_path, frame, capsys):
    path = tmp_path / "many.csv"
    frame.drop(columns=["is_error"]).head(600).to_csv(path, index=False)
    out = tmp_path / "issues.csv"
    assert main(["scan", str(path), "--scorers", "tfidf", "--top-classes", "3",
                 "--out", str(out), "--quiet"]) == 0
    written = pd.read_csv(out)
    assert len(written) == 600 and {"suggested_label", "given_prob"} <= set(written.columns)
    with pytest.raises(SystemExit):
        main(["scan", str(path), "--top-classes", "1", "--out", str(tmp_path / "x.csv")])
    assert "--top-classes" in capsys.readouterr().err


def test_a_fold_checkpoint_keeps_the_top_classes(tmp_path):
    probs = np.random.default_rng(0).dirichlet(np.ones(12), size=6)
    labels = np.arange(6)
    kept = TopKProbs.from_dense(probs, labels, k=3)
    store = FoldStore(tmp_path / "folds")
    store.save("key", 0, np.arange(6), kept)
    rows, loaded, _ = store.load("key", 0)
    assert isinstance(loaded, TopKProbs) and loaded.n_classes == 12
    np.testing.assert_allclose(loaded.dense(), kept.dense())
    np.testing.assert_array_equal(rows, np.arange(6))
