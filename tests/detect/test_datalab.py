import numpy as np
import pytest

from labelaudit import InvalidInputError, InvalidParameterError
from labelaudit._errors import LabelAuditError
from labelaudit.detect import datalab_issues
from labelaudit.models import datalab_features


def _blob(n=60, d=20, seed=0):
    """Items around one direction (cosine distance is the metric for d > 3); in 20
    dimensions, no two of them are near-duplicates by chance."""
    rng = np.random.default_rng(seed)
    features = rng.normal(size=(n, d)) * 0.3
    features[:, 0] += 3.0
    labels = rng.integers(3, size=n)
    pred_probs = rng.dirichlet(np.ones(3), size=n)
    return labels, pred_probs, features


def test_exact_duplicates_with_different_labels_point_at_each_other():
    labels, pred_probs, features = _blob()
    features[7] = features[3]
    labels[3], labels[7] = 0, 2
    ids = [f"item{i}" for i in range(len(labels))]
    found = datalab_issues(labels, pred_probs, features, ids=ids,
                           issue_types=["near_duplicate"])
    assert found.is_near_duplicate[[3, 7]].all()
    assert found.near_duplicate_id[3] == "item7"
    assert found.near_duplicate_id[7] == "item3"
    assert found.near_duplicate_label_conflict[[3, 7]].all()
    assert found.n_duplicate_sets == 1 and found.n_conflicting_sets == 1
    assert found.duplicate_groups[3] == found.duplicate_groups[7] == 0
    others = np.setdiff1d(np.arange(len(labels)), [3, 7])
    assert not found.is_near_duplicate[others].any()
    assert all(v is None for v in found.near_duplicate_id[others])
    assert "1 sets with different labels" in found.summary()


def test_duplicates_with_the_same_label_are_no_conflict():
    labels, pred_probs, features = _blob()
    features[7] = features[3]
    labels[7] = labels[3]
    found = datalab_issues(labels, pred_probs, features, issue_types=["near_duplicate"])
    assert found.is_near_duplicate[[3, 7]].all()
    assert not found.near_duplicate_label_conflict.any()
    assert found.n_conflicting_sets == 0


def test_a_far_away_point_is_the_outlier():
    labels, pred_probs, features = _blob()
    features[10] = np.eye(20)[0] * -3.0
    found = datalab_issues(labels, pred_probs, features, issue_types=["outlier"])
    assert found.is_outlier[10]
    assert found.outlier_score.argmin() == 10
    assert found.is_outlier.sum() == 1
    assert np.all((found.outlier_score >= 0) & (found.outlier_score <= 1))


def test_random_order_is_iid_and_drift_with_row_order_is_not():
    rng = np.random.default_rng(0)
    n = 300
    labels = rng.integers(2, size=n)
    pred_probs = np.full((n, 2), 0.5)
    iid = datalab_issues(labels, pred_probs, rng.normal(size=(n, 5)), issue_types=["non_iid"])
    assert not iid.is_non_iid and iid.non_iid_p_value > 0.05
    # the features turn slowly with the row number: neighbours are adjacent rows
    angle = np.linspace(0, np.pi, n)
    drift = np.column_stack([np.cos(angle), np.sin(angle), 0.01 * rng.normal(size=(n, 3))])
    found = datalab_issues(labels, pred_probs, drift, issue_types=["non_iid"])
    assert found.is_non_iid and found.non_iid_p_value < 0.05
    assert "row order carries information" in found.summary()
    shuffled = datalab_issues(labels, pred_probs, drift[rng.permutation(n)],
                              issue_types=["non_iid"])
    assert not shuffled.is_non_iid


def test_to_frame_is_in_item_order():
    labels, pred_probs, features = _blob()
    features[7] = features[3]
    features[10] = np.eye(20)[0] * -3.0
    ids = np.arange(100, 100 + len(labels))
    found = datalab_issues(labels, pred_probs, features, ids=ids)
    frame = found.to_frame()
    assert list(frame.columns) == ["is_near_duplicate", "near_duplicate_id",
                                   "near_duplicate_label_conflict", "is_outlier",
                                   "outlier_score", "non_iid_p_value"]
    assert (frame["non_iid_p_value"] == found.non_iid_p_value).all()  # dataset-level
    assert list(frame.index) == list(range(len(labels)))
    np.testing.assert_array_equal(frame["outlier_score"], found.outlier_score)
    assert frame.loc[3, "near_duplicate_id"] == 107 and frame.loc[10, "is_outlier"]
    # reordering the items reorders the rows and nothing else
    perm = np.random.default_rng(0).permutation(len(labels))
    moved = datalab_issues(labels[perm], pred_probs[perm], features[perm], ids=ids[perm],
                           issue_types=["near_duplicate", "outlier"]).to_frame()
    np.testing.assert_allclose(moved["outlier_score"], frame["outlier_score"].to_numpy()[perm])
    assert list(moved["near_duplicate_id"]) == list(frame["near_duplicate_id"].to_numpy()[perm])
    np.testing.assert_array_equal(moved["is_outlier"], frame["is_outlier"].to_numpy()[perm])


def test_only_the_asked_issue_types_are_reported():
    labels, pred_probs, features = _blob()
    found = datalab_issues(labels, pred_probs, features, issue_types=["outlier"])
    assert list(found.to_frame().columns) == ["is_outlier", "outlier_score"]
    assert found.non_iid_p_value is None and not found.is_non_iid
    assert found.summary().startswith("outliers:")
    assert found.issue_types == ("outlier",)


def test_same_random_state_same_p_value_and_global_rng_untouched():
    labels, pred_probs, features = _blob()
    np.random.seed(123)  # noqa: NPY002 - the legacy global RNG cleanlab seeds
    before = np.random.get_state()[1].copy()  # noqa: NPY002
    a = datalab_issues(labels, pred_probs, features, issue_types=["non_iid"], random_state=1)
    assert np.array_equal(np.random.get_state()[1], before)  # noqa: NPY002
    b = datalab_issues(labels, pred_probs, features, issue_types=["non_iid"], random_state=1)
    assert a.non_iid_p_value == b.non_iid_p_value


@pytest.mark.parametrize("change, words", [
    (lambda y, p, f: (y, p, f[:-1]), "features must have shape"),
    (lambda y, p, f: (y, p[:-1], f), "pred_probs must have shape"),
    (lambda y, p, f: (y, p, f[:, 0]), "features must have shape"),
    (lambda y, p, f: (y[:, None], p, f), "labels must have shape"),
])
def test_mismatched_shapes_are_named(change, words):
    labels, pred_probs, features = change(*_blob())
    with pytest.raises(InvalidInputError, match=words):
        datalab_issues(labels, pred_probs, features)


def test_nan_is_refused_with_its_rows():
    labels, pred_probs, features = _blob()
    features[4, 2] = np.nan
    with pytest.raises(InvalidInputError, match="features has NaN.*row 4"):
        datalab_issues(labels, pred_probs, features)
    labels, pred_probs, features = _blob()
    pred_probs[[1, 2], 0] = np.nan
    with pytest.raises(InvalidInputError, match="pred_probs has NaN.*rows 1, 2"):
        datalab_issues(labels, pred_probs, features)


def test_too_few_items_says_how_many_are_needed():
    labels, pred_probs, features = _blob(n=8)
    with pytest.raises(InvalidInputError, match="at least 11 items; got 8"):
        datalab_issues(labels, pred_probs, features, k=10)
    assert datalab_issues(labels, pred_probs, features, k=3, issue_types=["outlier"])


def test_bad_options_and_ids():
    labels, pred_probs, features = _blob()
    with pytest.raises(InvalidParameterError, match="labelaudit's own ranking"):
        datalab_issues(labels, pred_probs, features, issue_types=["label"])
    with pytest.raises(InvalidParameterError, match="non-empty"):
        datalab_issues(labels, pred_probs, features, issue_types=[])
    with pytest.raises(InvalidParameterError, match="k must"):
        datalab_issues(labels, pred_probs, features, k=0)
    with pytest.raises(InvalidInputError, match="ids must have shape"):
        datalab_issues(labels, pred_probs, features, ids=[1, 2])
    with pytest.raises(InvalidInputError, match="classes has 2 names"):
        datalab_issues(labels, pred_probs, features, classes=["a", "b"])


def test_too_old_cleanlab_names_the_version_needed(monkeypatch):
    import cleanlab

    monkeypatch.setattr(cleanlab, "__version__", "2.5.0")
    with pytest.raises(LabelAuditError, match=r"cleanlab >= 2\.6 \(installed: 2\.5\.0\)"):
        datalab_issues(*_blob())


def test_tfidf_features_are_normalised_and_equal_for_equal_texts():
    rng = np.random.default_rng(0)
    words = np.array(["goal", "team", "pasta", "sauce", "chip", "code", "cloud", "match"])
    texts = [" ".join(rng.choice(words, size=6)) for _ in range(30)]
    texts[5] = texts[2]
    features = datalab_features(texts, method="tfidf", n_components=4)
    assert features.shape == (30, 4)
    np.testing.assert_allclose(np.linalg.norm(features, axis=1), 1, atol=1e-5)
    np.testing.assert_allclose(features[2], features[5])
    pairs = datalab_features(texts, text_pairs=texts[::-1], method="tfidf", n_components=4)
    assert pairs.shape == (30, 8)
    with pytest.raises(InvalidParameterError, match="method"):
        datalab_features(texts, method="bert")
    with pytest.raises(InvalidInputError, match="text_pairs has 2"):
        datalab_features(texts, text_pairs=["a", "b"], method="tfidf")


def test_embed_features_go_through_the_embedding_cache(tiny_bert_dir, tmp_path):
    texts = ["match goal team", "pasta sauce cook", "match goal team"]
    first = datalab_features(texts, method="embed", model=str(tiny_bert_dir),
                             cache_dir=tmp_path)
    assert first.shape[0] == 3
    np.testing.assert_allclose(first[0], first[2], atol=1e-6)
    assert list(tmp_path.rglob("*.npz"))  # cached on disk, as the embed member does
    again = datalab_features(texts, method="embed", model=str(tiny_bert_dir),
                             cache_dir=tmp_path)
    np.testing.assert_allclose(first, again)
