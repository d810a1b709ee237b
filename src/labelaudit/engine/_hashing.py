"""Hashed TF-IDF features and a logistic model trained out of core, one fold at a time.

The features are those of :class:`labelaudit.models.TfidfScorer` (word 1-2-grams of
``(?u)\\b\\w+\\b`` tokens, lowercased, sublinear tf, smooth idf, l2 rows; each side of a
pair normalised on its own) with the vocabulary replaced by the hashing trick, so no
vocabulary pass is needed and memory does not grow with the data. The document
frequencies behind the idf are counted per fold while the data streams by, so fold ``k``'s
idf, like its model, comes from the other folds only.

The model is a one-vs-rest logistic regression fitted by stochastic gradient descent
(:class:`sklearn.linear_model.SGDClassifier` with ``loss="log_loss"``), one ``partial_fit``
per bucket of rows, ``epochs`` passes over the buckets in a seeded order with the rows of
each bucket in a seeded order: a fixed amount of memory per bucket, and a result that does
not depend on how the input was chunked.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, Protocol

import numpy as np

from labelaudit._errors import InvalidParameterError
from labelaudit._validation import check_int, check_number

__all__ = ["BucketReader", "FoldCounts", "FoldPrediction", "HashingOptions", "bucket_ids",
           "fit_fold", "fold_ids", "hash_texts", "tfidf_rows"]

TOKEN_PATTERN = r"(?u)\b\w+\b"  # the pattern of TfidfScorer: one-letter words count


@dataclass(frozen=True, kw_only=True)
class HashingOptions:
    """Options of the hashed TF-IDF model.

    Parameters
    ----------
    n_features : int, default=2**20
        Hash buckets per text column (a pair has twice as many columns).
    ngram_range : tuple of int, default=(1, 2)
    sublinear_tf : bool, default=True
        ``1 + log(tf)`` instead of raw counts.
    alpha : float or "auto", default="auto"
        L2 penalty of the SGD objective ``mean(loss) + alpha * ||w||^2 / 2``. ``"auto"`` is
        ``1 / (C * n_train)``: a logistic regression's objective ``C * sum(loss) +
        ||w||^2 / 2`` divided by ``C * n_train``, so the penalty per item shrinks as the
        data grows, as it does for :class:`~labelaudit.models.TfidfScorer`.
    C : float, default=5.0
        Inverse regularisation strength used by ``alpha="auto"``. Half of TfidfScorer's
        10: the hashed features keep every n-gram (no ``max_features`` cut), and 5 was
        within 0.01 average precision of TfidfScorer on every set with known errors in
        ``benchmarks/scale_cost.py --tune`` (10 lost 0.011 on ChaosNLI-SNLI).
    epochs : int, default=5
        Passes over the training rows of each fold.
    n_buckets : int, default=64
        Rows are spread over this many buckets by a seeded hash of their row number.
    batch_size : int, default=100_000
        Training rows per ``partial_fit`` call: whole buckets are gathered, in the epoch's
        bucket order, until there are this many (one call costs
        ``O(n_classes * n_features)`` on top of its rows, so small calls are slow), and
        shuffled together. At most about this many rows' features are in memory at once.

    Examples
    --------
    >>> HashingOptions().alpha_for(500_000)
    4e-07
    """

    n_features: int = 2**20
    ngram_range: tuple[int, int] = (1, 2)
    sublinear_tf: bool = True
    alpha: float | Literal["auto"] = "auto"
    C: float = 5.0
    epochs: int = 5
    n_buckets: int = 64
    batch_size: int = 100_000

    def check(self) -> HashingOptions:
        """Raise :class:`InvalidParameterError` for an option out of range; else ``self``."""
        check_int(self.n_features, "n_features", minimum=16, maximum=2**28)
        check_int(self.epochs, "epochs", minimum=1)
        check_int(self.n_buckets, "n_buckets", minimum=1, maximum=4096)
        check_int(self.batch_size, "batch_size", minimum=1)
        check_number(self.C, "C", low=0, low_open=True)
        if self.alpha != "auto":
            check_number(self.alpha, "alpha", low=0, low_open=True)
        low, high = self.ngram_range
        if not (1 <= low <= high):
            raise InvalidParameterError(
                f"ngram_range must be (low, high) with 1 <= low <= high; got {self.ngram_range}")
        return self

    def alpha_for(self, n_train: int) -> float:
        """The SGD penalty for a fold with ``n_train`` training rows."""
        if self.alpha == "auto":
            return 1.0 / (self.C * max(n_train, 1))
        return float(self.alpha)


def hash_texts(texts: Any, pairs: Any | None, options: HashingOptions) -> Any:
    """Hashed term frequencies, shape (n_samples, n_features) or (n_samples, 2 *
    n_features) for pairs: ``1 + log(tf)`` (sublinear) or ``tf``, float32 CSR, no idf.

    Examples
    --------
    >>> x = hash_texts(["a b a"], None, HashingOptions(n_features=1024))
    >>> x.shape, sorted(round(float(v), 3) for v in x.data)  # a: 1 + log 2; b, a b, b a: 1
    ((1, 1024), [1.0, 1.0, 1.0, 1.693])
    """
    import scipy.sparse as sp
    from sklearn.feature_extraction.text import HashingVectorizer

    vectorizer = HashingVectorizer(n_features=options.n_features, ngram_range=options.ngram_range,
                                   alternate_sign=False, norm=None, token_pattern=TOKEN_PATTERN,
                                   dtype=np.float32)
    blocks = [vectorizer.transform(texts)]
    if pairs is not None:
        blocks.append(vectorizer.transform(pairs))
    matrix = (blocks[0] if len(blocks) == 1 else sp.hstack(blocks, format="csr")).tocsr()
    matrix.sum_duplicates()
    if options.sublinear_tf:
        np.log(matrix.data, out=matrix.data)
        matrix.data += 1.0
    return matrix


def _mix(values: np.ndarray) -> np.ndarray:
    """splitmix64 of unsigned 64-bit integers: a fast, well-spread, seedless hash."""
    with np.errstate(over="ignore"):
        z = values.astype(np.uint64) + np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


def _salted(rows: np.ndarray, random_state: int, salt: int) -> np.ndarray:
    key = _mix(np.array([random_state * 1_000_003 + salt], dtype=np.uint64))
    with np.errstate(over="ignore"):
        return _mix(np.asarray(rows, dtype=np.uint64) ^ key)


def fold_ids(rows: np.ndarray, *, n_folds: int, random_state: int) -> np.ndarray:
    """The fold of each row, from a seeded hash of its row number (0-based, in input order):
    computable chunk by chunk, the same on every engine.

    Examples
    --------
    >>> folds = fold_ids(np.arange(10_000), n_folds=5, random_state=0)
    >>> np.bincount(folds).tolist() == np.bincount(folds, minlength=5).tolist()
    True
    >>> bool(np.all(np.abs(np.bincount(folds) - 2000) < 150))
    True
    """
    return (_salted(rows, random_state, 1) % np.uint64(n_folds)).astype(np.int8)


def bucket_ids(rows: np.ndarray, *, n_buckets: int, random_state: int) -> np.ndarray:
    """The training bucket of each row (a second seeded hash of its row number)."""
    return (_salted(rows, random_state, 2) % np.uint64(n_buckets)).astype(np.int32)


class FoldCounts:
    """Document frequencies of every hashed feature, counted separately for each fold.

    Fold ``k``'s idf uses the documents of the other folds only:
    ``idf = ln((1 + n) / (1 + df)) + 1`` (scikit-learn's smooth idf), ``n`` and ``df``
    summed over the folds other than ``k``.

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> counts = FoldCounts(n_folds=2, width=3)
    >>> counts.add(sp.csr_matrix(np.array([[1, 0, 1], [0, 0, 1]])), np.array([0, 1]))
    >>> [round(float(v), 3) for v in counts.idf(0)]  # fold 1 only: one document, feature 2
    [1.693, 1.693, 1.0]
    """

    def __init__(self, *, n_folds: int, width: int) -> None:
        self.df = np.zeros((n_folds, width), dtype=np.int64)
        self.n = np.zeros(n_folds, dtype=np.int64)

    def add(self, matrix: Any, folds: np.ndarray) -> None:
        """Count the documents of one chunk (``matrix`` CSR, ``folds`` per row)."""
        nnz_fold = np.repeat(folds.astype(np.int64), np.diff(matrix.indptr))
        keys = nnz_fold * self.df.shape[1] + matrix.indices
        if len(keys) * 8 < self.df.size:  # a small chunk: count only the keys it has
            unique, count = np.unique(keys, return_counts=True)
            self.df.reshape(-1)[unique] += count
        else:
            self.df += np.bincount(keys, minlength=self.df.size).reshape(self.df.shape)
        self.n += np.bincount(folds.astype(np.int64), minlength=len(self.n))

    def merge(self, other: FoldCounts) -> None:
        self.df += other.df
        self.n += other.n

    def n_train(self, fold: int) -> int:
        """Documents outside ``fold``."""
        return int(self.n.sum() - self.n[fold])

    def idf(self, fold: int) -> np.ndarray:
        """Smooth idf over every fold but ``fold``, float32 (n_features,)."""
        df = self.df.sum(axis=0) - self.df[fold]
        n = int(self.n.sum() - self.n[fold])
        return (np.log((1.0 + n) / (1.0 + df)) + 1.0).astype(np.float32)


def tfidf_rows(matrix: Any, idf: np.ndarray, *, n_features: int) -> Any:
    """Weight hashed term frequencies by ``idf`` and l2-normalise each row, each side of a
    pair (columns ``< n_features`` and ``>= n_features``) on its own; a new CSR matrix."""
    out = matrix.copy()
    out.data *= idf[out.indices]
    rows = np.repeat(np.arange(out.shape[0], dtype=np.int64), np.diff(out.indptr))
    key = rows * 2 + (out.indices >= n_features)
    norms = np.sqrt(np.bincount(key, weights=out.data.astype(np.float64) ** 2,
                                minlength=2 * out.shape[0]))
    norms[norms == 0] = 1.0
    out.data /= norms[key].astype(np.float32)
    return out


class BucketReader(Protocol):
    """Where the hashed rows are kept between passes: a folder or Ray's object store."""

    n_buckets: int

    def read(self, bucket: int) -> tuple[Any, np.ndarray]:
        """The rows of one bucket, in input order: (CSR matrix, row numbers)."""


@dataclass(frozen=True)
class FoldPrediction:
    """Held-out probabilities of one fold: ``rows`` (n_held_out,) and ``probs``
    (n_held_out, n_classes), float32."""

    fold: int
    rows: np.ndarray
    probs: np.ndarray


def _model(alpha: float, random_state: int, n_jobs: int | None) -> Any:
    from sklearn.linear_model import SGDClassifier

    return SGDClassifier(loss="log_loss", alpha=alpha, learning_rate="optimal",
                         shuffle=False, random_state=random_state, n_jobs=n_jobs)


def fit_fold(fold: int, store: BucketReader, labels: np.ndarray, folds: np.ndarray,
             idf: np.ndarray, options: HashingOptions, *, n_classes: int, n_train: int,
             random_state: int, n_jobs: int | None = None) -> FoldPrediction:
    """Fit fold ``fold``'s model on the other folds' rows and predict its own rows.

    Each epoch visits the buckets in a seeded order (the same for every fold), gathers
    them into batches of about ``options.batch_size`` training rows, and shows each batch
    to SGD in a seeded order; rows of ``fold`` are skipped. About one batch of features is
    in memory at a time.

    Parameters
    ----------
    fold : int
    store : BucketReader
    labels : ndarray of int, shape (n_samples,)
    folds : ndarray of int, shape (n_samples,)
    idf : ndarray of shape (width,)
        The fold's idf (:meth:`FoldCounts.idf`: from the other folds only).
    options : HashingOptions
    n_classes : int
    n_train : int
        Rows outside the fold (for ``alpha="auto"``).
    random_state : int
    n_jobs : int, optional
        Threads for the one-vs-rest binary problems.

    Returns
    -------
    FoldPrediction
    """
    model = _model(options.alpha_for(n_train), random_state, n_jobs)
    classes = np.arange(n_classes)
    for epoch in range(options.epochs):
        for step, (matrix, rows) in enumerate(_batches(store, folds, fold, epoch, options,
                                                       random_state)):
            shuffle = np.random.default_rng([random_state, epoch, step]).permutation(len(rows))
            model.partial_fit(tfidf_rows(matrix[shuffle], idf, n_features=options.n_features),
                              labels[rows[shuffle]], classes=classes)
    held_rows, held_probs = [], []
    for matrix, rows in _gather(store, range(store.n_buckets), folds == fold,
                                options.batch_size):
        held_rows.append(rows)
        held_probs.append(_predict(model, tfidf_rows(matrix, idf, n_features=options.n_features),
                                   n_classes).astype(np.float32))
    if not held_rows:
        return FoldPrediction(fold, np.zeros(0, np.int64), np.zeros((0, n_classes), np.float32))
    return FoldPrediction(fold, np.concatenate(held_rows),
                          np.concatenate(held_probs).astype(np.float32))


def _batches(store: BucketReader, folds: np.ndarray, fold: int, epoch: int,
             options: HashingOptions, random_state: int) -> Any:
    """One epoch's training batches of a fold: whole buckets in a seeded order (the same
    for every fold), the fold's own rows left out."""
    order = np.random.default_rng([random_state, epoch]).permutation(store.n_buckets)
    return _gather(store, (int(b) for b in order), folds != fold, options.batch_size)


def _gather(store: BucketReader, buckets: Any, keep: np.ndarray, batch_size: int) -> Any:
    """The rows of ``buckets`` (in that order) where ``keep`` (indexed by row number) is
    true, as (CSR matrix, row numbers) batches of at least ``batch_size`` rows (the last
    may be smaller)."""
    import scipy.sparse as sp

    matrices, row_parts, size = [], [], 0
    for bucket in buckets:
        matrix, rows = store.read(bucket)
        chosen = np.flatnonzero(keep[rows])
        if not len(chosen):
            continue
        matrices.append(matrix[chosen])
        row_parts.append(rows[chosen])
        size += len(chosen)
        if size >= batch_size:
            yield sp.vstack(matrices, format="csr"), np.concatenate(row_parts)
            matrices, row_parts, size = [], [], 0
    if size:
        yield sp.vstack(matrices, format="csr"), np.concatenate(row_parts)


def _predict(model: Any, matrix: Any, n_classes: int) -> np.ndarray:
    """Probabilities of every class; a model that never saw a row (an empty training fold)
    predicts the uniform distribution."""
    if not hasattr(model, "coef_"):
        return np.full((matrix.shape[0], n_classes), 1.0 / n_classes)
    return model.predict_proba(matrix)
