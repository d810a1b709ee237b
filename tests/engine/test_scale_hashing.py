"""Hashed TF-IDF features, seeded folds and the out-of-core fold fit."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from labelaudit._errors import InvalidParameterError
from labelaudit.engine import FoldCounts, HashingOptions, fold_ids, hash_texts, tfidf_rows
from labelaudit.engine._hashing import FolderStore, FoldPrediction, bucket_ids, fit_fold

TEXTS = ["the match was a goal", "pasta sauce and a cook", "a goal for the team",
         "cook the pasta", "team team goal"]


def test_features_equal_sklearn_tfidf_on_hashed_counts():
    from sklearn.feature_extraction.text import HashingVectorizer, TfidfTransformer

    options = HashingOptions(n_features=2**12)
    counts = HashingVectorizer(n_features=2**12, ngram_range=(1, 2), alternate_sign=False,
                               norm=None, token_pattern=r"(?u)\b\w+\b").transform(TEXTS)
    expected = TfidfTransformer(sublinear_tf=True).fit_transform(counts).toarray()
    hashed = hash_texts(TEXTS, None, options)
    folds = FoldCounts(n_folds=2, width=hashed.shape[1])
    folds.add(hashed, np.ones(len(TEXTS), dtype=np.int8))  # every text in fold 1
    got = tfidf_rows(hashed, folds.idf(0), n_features=options.n_features).toarray()
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)


def test_each_side_of_a_pair_is_normalised_on_its_own():
    options = HashingOptions(n_features=64)
    hashed = hash_texts(TEXTS, TEXTS[::-1], options)
    assert hashed.shape == (5, 128)
    rows = tfidf_rows(hashed, np.ones(128, dtype=np.float32), n_features=64).toarray()
    np.testing.assert_allclose(np.linalg.norm(rows[:, :64], axis=1), 1, rtol=1e-5)
    np.testing.assert_allclose(np.linalg.norm(rows[:, 64:], axis=1), 1, rtol=1e-5)


def test_idf_of_a_fold_ignores_that_folds_documents():
    matrix = sp.csr_matrix(np.array([[1, 0], [1, 1], [0, 1]], dtype=np.float32))
    counts = FoldCounts(n_folds=3, width=2)
    counts.add(matrix, np.array([0, 1, 2]))
    # fold 2 held out: documents 0 and 1; feature 0 in both, feature 1 in one
    np.testing.assert_allclose(counts.idf(2), [1.0, np.log(3 / 2) + 1], rtol=1e-6)
    assert counts.n_train(2) == 2


def test_folds_and_buckets_are_seeded_hashes_of_the_row_number():
    rows = np.arange(20_000)
    folds = fold_ids(rows, n_folds=5, random_state=0)
    assert folds.dtype == np.int8 and set(folds.tolist()) == set(range(5))
    assert np.all(np.abs(np.bincount(folds) - 4000) < 200)
    np.testing.assert_array_equal(folds[1234:1300],
                                  fold_ids(rows[1234:1300], n_folds=5, random_state=0))
    assert not np.array_equal(folds, fold_ids(rows, n_folds=5, random_state=1))
    buckets = bucket_ids(rows, n_buckets=8, random_state=0)
    assert abs(np.corrcoef(folds, buckets)[0, 1]) < 0.05


def test_options_out_of_range_are_refused():
    with pytest.raises(InvalidParameterError, match="epochs"):
        HashingOptions(epochs=0).check()
    with pytest.raises(InvalidParameterError, match="ngram_range"):
        HashingOptions(ngram_range=(2, 1)).check()
    with pytest.raises(InvalidParameterError, match="alpha"):
        HashingOptions(alpha=-1.0).check()
    assert HashingOptions(C=10).alpha_for(1000) == pytest.approx(1e-4)


def _fit(tmp_path, labels, texts, fold=0):
    options = HashingOptions(n_features=2**10, n_buckets=4, batch_size=16, epochs=3)
    matrix = hash_texts(texts, None, options)
    rows = np.arange(len(texts))
    folds = fold_ids(rows, n_folds=3, random_state=0)
    counts = FoldCounts(n_folds=3, width=matrix.shape[1])
    counts.add(matrix, folds)
    store = FolderStore(tmp_path, n_buckets=4)
    buckets = bucket_ids(rows, n_buckets=4, random_state=0)
    for b in range(4):
        store.put(b, rows[buckets == b], matrix[buckets == b])
    store.close()
    return fit_fold(fold, store, labels, folds, counts.idf(fold), options, n_classes=2,
                    n_train=counts.n_train(fold), random_state=0), folds


def test_a_fold_is_predicted_by_a_model_that_never_saw_it(tmp_path):
    rng = np.random.default_rng(0)
    texts = [f"{'goal team' if i % 2 else 'pasta cook'} {rng.integers(20)}" for i in range(60)]
    labels = np.arange(60) % 2
    first, folds = _fit(tmp_path / "a", labels, texts)
    assert isinstance(first, FoldPrediction)
    np.testing.assert_array_equal(np.sort(first.rows), np.flatnonzero(folds == 0))
    assert (first.probs.argmax(1) == labels[first.rows]).mean() > 0.9
    scrambled = labels.copy()
    scrambled[folds == 0] = 1 - scrambled[folds == 0]  # the held-out labels change
    second, _ = _fit(tmp_path / "b", scrambled, texts)
    np.testing.assert_array_equal(first.rows, second.rows)
    np.testing.assert_allclose(first.probs, second.probs)
