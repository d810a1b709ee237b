"""Out-of-core TF-IDF: :class:`labelaudit.models.TfidfScorer`'s features with the hashing trick
(no vocabulary pass; idf counted per fold as the data streams, so fold ``k``'s comes from the
other folds), and a one-vs-rest SGD logistic model fitted over seeded buckets of rows, so the
result does not depend on chunking."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Literal, Protocol

import numpy as np

from labelaudit._errors import InvalidInputError, InvalidParameterError, format_rows
from labelaudit._validation import check_int, check_number
from labelaudit.io import label_problem, label_values, text_values, value_kind
from labelaudit.models import check_fold_count

if TYPE_CHECKING:
    import pandas as pd


TOKEN_PATTERN = r"(?u)\b\w+\b"  # the pattern of TfidfScorer: one-letter words count


@dataclass(frozen=True, kw_only=True)
class HashingOptions:
    """Options of the hashed TF-IDF model.

    Parameters
    ----------
    n_features
        Hash buckets per text column.
    ngram_range, sublinear_tf
        As :class:`~labelaudit.models.TfidfScorer` (``1 + log(tf)``).
    alpha
        L2 penalty of SGD's ``mean(loss) + alpha * ||w||^2 / 2``; ``"auto"`` is ``1 / (C *
        n_train)``, logistic regression's ``C * sum(loss) + ||w||^2 / 2`` per item.
    C
        Used by ``alpha="auto"``: half of TfidfScorer's 10, as the hashed features keep every
        n-gram; 5 was within 0.01 AP of TfidfScorer on every set with known errors
        (``benchmarks/scale_cost.py --tune``; 10 lost 0.011 on ChaosNLI-SNLI).
    epochs, n_buckets
        Passes over each fold's training rows; buckets rows are hashed into (by row number).
    batch_size
        Training rows per ``partial_fit`` call (whole buckets gathered and shuffled; one call
        costs ``O(n_classes * n_features)``); about this many rows are in memory at once.

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
    """Hashed (sublinear) term frequencies, float32 CSR (n_samples, n_features), no idf.

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
    """The fold of each row from a seeded hash of its row number: the same on every engine.

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
    """Document frequencies per fold; fold ``k``'s idf is scikit-learn's smooth
    ``ln((1 + n) / (1 + df)) + 1`` with ``n`` and ``df`` summed over the other folds."""

    def __init__(self, *, n_folds: int, width: int) -> None:
        self.df = np.zeros((n_folds, width), dtype=np.int64)
        self.n = np.zeros(n_folds, dtype=np.int64)

    def add(self, matrix: Any, folds: np.ndarray) -> None:
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
        return int(self.n.sum() - self.n[fold])

    def idf(self, fold: int) -> np.ndarray:
        df = self.df.sum(axis=0) - self.df[fold]
        return (np.log((1.0 + self.n_train(fold)) / (1.0 + df)) + 1.0).astype(np.float32)


def tfidf_rows(matrix: Any, idf: np.ndarray, *, n_features: int) -> Any:
    """A copy weighted by ``idf``, each row (each side of a pair) l2-normalised."""
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
        """(CSR matrix, row numbers) of one bucket, in input order."""


@dataclass(frozen=True)
class FoldPrediction:
    """Held-out probabilities of one fold: ``rows`` (n_held_out,) and ``probs``
    (n_held_out, n_classes), float32."""

    fold: int
    rows: np.ndarray
    probs: np.ndarray

    @classmethod
    def of(cls, fold: int, rows: list[np.ndarray], probs: list[np.ndarray],
           n_classes: int) -> FoldPrediction:
        """The fold's prediction from its parts (none: an empty one)."""
        if not rows:
            return cls(fold, np.zeros(0, np.int64), np.zeros((0, n_classes), np.float32))
        return cls(fold, np.concatenate(rows), np.concatenate(probs).astype(np.float32))


def _model(alpha: float, random_state: int, n_jobs: int | None) -> Any:
    from sklearn.linear_model import SGDClassifier

    return SGDClassifier(loss="log_loss", alpha=alpha, learning_rate="optimal",
                         shuffle=False, random_state=random_state, n_jobs=n_jobs)


def fit_fold(fold: int, store: BucketReader, labels: np.ndarray, folds: np.ndarray,
             idf: np.ndarray, options: HashingOptions, *, n_classes: int, n_train: int,
             random_state: int, n_jobs: int | None = None) -> FoldPrediction:
    """Fit fold ``fold``'s model on the other folds' rows (``idf`` from them) and predict
    its own, one batch of seeded buckets in memory at a time."""
    model = _model(options.alpha_for(n_train), random_state, n_jobs)
    classes = np.arange(n_classes)
    for epoch in range(options.epochs):
        for step, (matrix, rows) in enumerate(_batches(store, folds, fold, epoch, options,
                                                       random_state)):
            shuffle = np.random.default_rng([random_state, epoch, step]).permutation(len(rows))
            model.partial_fit(tfidf_rows(matrix[shuffle], idf, n_features=options.n_features),
                              labels[rows[shuffle]], classes=classes)
    held_rows, held_probs = [], []
    for matrix, rows in _gather(store, range(store.n_buckets), folds == fold, options.batch_size):
        held_rows.append(rows)
        held_probs.append(_predict(model, tfidf_rows(matrix, idf, n_features=options.n_features),
                                   n_classes).astype(np.float32))
    return FoldPrediction.of(fold, held_rows, held_probs, n_classes)


def _batches(store: BucketReader, folds: np.ndarray, fold: int, epoch: int,
             options: HashingOptions, random_state: int) -> Any:
    """One epoch's training batches of a fold: buckets in a seeded order, its rows left out."""
    order = np.random.default_rng([random_state, epoch]).permutation(store.n_buckets)
    return _gather(store, (int(b) for b in order), folds != fold, options.batch_size)


def _gather(store: BucketReader, buckets: Any, keep: np.ndarray, batch_size: int) -> Any:
    """(CSR matrix, row numbers) batches of at least ``batch_size`` rows where ``keep``."""
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
    """Probabilities; uniform from a model that saw no row (an empty training fold)."""
    if not hasattr(model, "coef_"):
        return np.full((matrix.shape[0], n_classes), 1.0 / n_classes)
    return model.predict_proba(matrix)


@dataclass(frozen=True)
class Columns:
    """The columns a scan reads: ``id`` None means row numbers are the ids."""

    text: str
    label: str
    text_pair: str | None = None
    id: str | None = None

    @property
    def needed(self) -> list[str]:
        return [c for c in (self.id, self.text, self.text_pair, self.label) if c is not None]


@dataclass(frozen=True)
class HashedChunk:
    """Hashed features and checked labels and ids of one chunk (rows in input order)."""

    n_rows: int
    matrix: Any  # CSR (n_rows, width), hashed (sublinear) term frequencies
    labels: np.ndarray  # label values, normalised as encode_labels does
    label_kinds: frozenset[str]
    id_hashes: np.ndarray | None  # uint64, None for row-number ids
    id_kinds: frozenset[str] = frozenset()
    problems: tuple[str, ...] = ()  # messages with {rows} where global rows go
    problem_rows: tuple[np.ndarray, ...] = ()  # local rows of each problem
    problem_ids: tuple[list[Any], ...] = ()  # their ids (empty for row-number ids)


def hash_chunk(frame: pd.DataFrame, columns: Columns, options: HashingOptions) -> HashedChunk:
    """Check one chunk and hash its texts; problems are reported, not raised, so that the
    collector names rows by their position in the whole input."""
    import pandas as pd
    problems: list[str] = []
    rows: list[np.ndarray] = []
    ids_shown: list[list[Any]] = []
    ids = frame[columns.id] if columns.id is not None else None

    def report(message: str, bad: np.ndarray) -> None:
        where = np.flatnonzero(bad)
        problems.append(message)
        rows.append(where)
        ids_shown.append([] if ids is None else ids.iloc[where].tolist())

    id_hashes, id_kinds = None, frozenset[str]()
    if ids is not None:
        missing_ids = ids.isna().to_numpy()
        if missing_ids.any():
            report(f"column {columns.id!r} has missing ids in {{rows}}", missing_ids)
        id_kinds = frozenset(map(value_kind, ids[~missing_ids].tolist()))
        id_hashes = pd.util.hash_array(ids.to_numpy(dtype=object))
    texts, empty = text_values(frame[columns.text])
    if empty.any():
        report(f"column {columns.text!r} has empty or missing text in {{rows}}; drop or fill "
               "those rows", empty)
    pairs = None
    if columns.text_pair is not None:
        pairs, empty_pairs = text_values(frame[columns.text_pair])
        if empty_pairs.any():
            report(f"column {columns.text_pair!r} has empty or missing text in {{rows}}; drop "
                   "or fill those rows", empty_pairs)
    label_series = frame[columns.label]
    missing = label_series.isna().to_numpy()
    if missing.any():
        report(f"column {columns.label!r} has missing labels in {{rows}}; label or drop those "
               "rows", missing)
        label_series = label_series.where(~missing, "")
    not_labels, message = label_problem(label_series, column=columns.label)
    if len(not_labels):  # lists of labels (multi-label) or objects
        bad = np.zeros(len(frame), dtype=bool)
        bad[not_labels] = True
        report(message, bad)
        label_series = label_series.where(~bad, "")
    labels, kinds = label_values(label_series)
    matrix = hash_texts(texts, pairs, options)
    del texts, pairs
    return HashedChunk(len(frame), matrix, labels, kinds, id_hashes, id_kinds,
                       tuple(problems), tuple(rows), tuple(ids_shown))


@dataclass
class Collector:
    """Each item's label, fold, id hash and per-fold document frequencies; ``put`` stores a
    bucket's share of a chunk; with ``exact_folds``, a class smaller than ``n_folds`` is refused."""

    columns: Columns
    options: HashingOptions
    n_folds: int
    random_state: int
    put: Callable[[int, np.ndarray, Any], None]
    exact_folds: bool = False
    n_rows: int = 0
    counts: FoldCounts | None = None
    _codes: list[np.ndarray] = field(default_factory=list)
    _values: dict[Any, int] = field(default_factory=dict)
    _label_kinds: set[str] = field(default_factory=set)
    _id_hashes: list[np.ndarray] = field(default_factory=list)
    _id_kinds: dict[str, int] = field(default_factory=dict)

    def add(self, chunk: HashedChunk) -> None:
        import pandas as pd
        start = self.n_rows
        for message, local, ids in zip(chunk.problems, chunk.problem_rows, chunk.problem_ids,
                                       strict=True):
            named = ids if self.columns.id is not None else (local + start).tolist()
            raise InvalidInputError(message.format(rows=format_rows(named)))
        self._check_kinds(chunk, start)
        rows = np.arange(start, start + chunk.n_rows, dtype=np.int64)
        folds = fold_ids(rows, n_folds=self.n_folds, random_state=self.random_state)
        if self.counts is None:
            self.counts = FoldCounts(n_folds=self.n_folds, width=chunk.matrix.shape[1])
        self.counts.add(chunk.matrix, folds)
        codes, uniques = pd.factorize(pd.Series(chunk.labels, dtype=object), sort=False)
        lookup = np.array([self._values.setdefault(v, len(self._values)) for v in uniques],
                          dtype=np.int32)
        self._codes.append(lookup[codes] if len(codes) else codes.astype(np.int32))
        if chunk.id_hashes is not None:
            self._id_hashes.append(chunk.id_hashes)
        buckets = bucket_ids(rows, n_buckets=self.options.n_buckets, random_state=self.random_state)
        order = np.argsort(buckets, kind="stable")
        sorted_buckets = buckets[order]
        bounds = np.searchsorted(sorted_buckets, np.arange(self.options.n_buckets + 1))
        matrix = chunk.matrix[order]
        for bucket in np.unique(sorted_buckets):
            lo, hi = bounds[bucket], bounds[bucket + 1]
            self.put(int(bucket), rows[order[lo:hi]], matrix[lo:hi])
        self.n_rows += chunk.n_rows

    def _check_kinds(self, chunk: HashedChunk, start: int) -> None:
        self._label_kinds |= chunk.label_kinds
        if len(self._label_kinds) > 1:
            raise InvalidInputError(
                f"column {self.columns.label!r} mixes label types "
                f"({', '.join(sorted(self._label_kinds))}); use all strings or all integers")
        for kind in chunk.id_kinds:
            self._id_kinds.setdefault(kind, start)
        if len(self._id_kinds) > 1:
            seen = ", ".join(f"{k} from row {r}" for k, r in self._id_kinds.items())
            raise InvalidInputError(
                f"column {self.columns.id!r} mixes id types ({seen}); an id 2 and an id '2' "
                "would be two items; use all strings or all integers")

    def finish(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(labels, classes, folds)`` of all rows, labels indexing the sorted classes."""
        if self.n_rows == 0:
            raise InvalidInputError("the table has no rows")
        values = list(self._values)
        classes = np.unique(np.array(values, dtype=object if "str" in self._label_kinds else None))
        position = {v: i for i, v in enumerate(classes.tolist())}
        remap = np.array([position[v] for v in values], dtype=np.int64)
        labels = remap[np.concatenate(self._codes)]
        counts = np.bincount(labels, minlength=len(classes))
        if len(classes) < 2:
            raise InvalidInputError(
                f"column {self.columns.label!r} has {len(classes)} class ({classes.tolist()}); "
                "at least 2 are needed to find label errors")
        if counts.min() < 2:
            lonely = classes[counts < 2].tolist()
            raise InvalidInputError(
                f"class{'es' if len(lonely) > 1 else ''} {lonely} "
                f"ha{'ve' if len(lonely) > 1 else 's'} a single item: it cannot be held out "
                "and learned at once; drop or merge it")
        if self.exact_folds:
            check_fold_count(counts, self.n_folds, classes.tolist())
        if self._id_hashes:
            hashes = np.concatenate(self._id_hashes)
            order = np.argsort(hashes, kind="stable")
            same = np.flatnonzero(hashes[order][1:] == hashes[order][:-1])
            if len(same):
                rows = np.unique(np.r_[order[same], order[same + 1]])
                raise InvalidInputError(
                    f"column {self.columns.id!r} has duplicate ids in {format_rows(rows)} "
                    "(row numbers, 0-based); ids must be unique")
        folds = fold_ids(np.arange(self.n_rows), n_folds=self.n_folds,
                         random_state=self.random_state)
        return labels, classes, folds


_HEADER = np.dtype(np.int64)


class FolderStore:
    """Each bucket's hashed rows, appended to ``folder/bucket_<b>.bin``: records of
    ``[n_rows, nnz, width]`` (int64), row numbers, nonzeros per row, indices and values.

    Examples
    --------
    >>> import tempfile, scipy.sparse as sp
    >>> store = FolderStore(tempfile.mkdtemp(), n_buckets=2)
    >>> store.put(1, np.array([4, 7]), sp.csr_matrix(np.array([[0, 1.5], [2.0, 0]],
    ...                                                        dtype=np.float32)))
    >>> store.close()
    >>> matrix, rows = store.read(1)
    >>> rows.tolist(), matrix.toarray().tolist()
    ([4, 7], [[0.0, 1.5], [2.0, 0.0]])
    >>> store.read(0)[1].tolist()
    []
    """

    def __init__(self, folder: str | Path, *, n_buckets: int) -> None:
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.n_buckets = n_buckets
        self.width = 0
        self._handles: dict[int, IO[bytes]] = {}

    def _path(self, bucket: int) -> Path:
        return self.folder / f"bucket_{bucket:04d}.bin"

    def put(self, bucket: int, rows: np.ndarray, matrix: Any) -> None:
        handle = self._handles.get(bucket)
        if handle is None:
            handle = self._handles[bucket] = open(self._path(bucket), "ab")  # noqa: SIM115
        self.width = matrix.shape[1]
        np.array([len(rows), matrix.nnz, matrix.shape[1]], dtype=_HEADER).tofile(handle)
        np.asarray(rows, dtype=np.int64).tofile(handle)
        np.diff(matrix.indptr).astype(np.int32).tofile(handle)
        matrix.indices.astype(np.int32).tofile(handle)
        matrix.data.astype(np.float32).tofile(handle)

    def close(self) -> None:
        """Flush every bucket file; call before reading."""
        for handle in self._handles.values():
            handle.close()
        self._handles.clear()

    def read(self, bucket: int) -> tuple[Any, np.ndarray]:
        import scipy.sparse as sp

        path = self._path(bucket)
        if not path.exists():
            return sp.csr_matrix((0, self.width), dtype=np.float32), np.zeros(0, np.int64)
        raw = path.read_bytes()
        rows: list[np.ndarray] = []
        lengths: list[np.ndarray] = []
        indices: list[np.ndarray] = []
        data: list[np.ndarray] = []
        offset, width = 0, self.width
        while offset < len(raw):
            n, nnz, width = np.frombuffer(raw, _HEADER, 3, offset)
            offset += 24
            for out, dtype, count in ((rows, np.int64, n), (lengths, np.int32, n),
                                      (indices, np.int32, nnz), (data, np.float32, nnz)):
                out.append(np.frombuffer(raw, dtype, int(count), offset))
                offset += int(count) * np.dtype(dtype).itemsize
        lengths_all = np.concatenate(lengths)
        indptr = np.zeros(len(lengths_all) + 1, dtype=np.int64)
        np.cumsum(lengths_all, out=indptr[1:])
        matrix = sp.csr_matrix((np.concatenate(data), np.concatenate(indices), indptr),
                               shape=(len(lengths_all), int(width)))
        return matrix, np.concatenate(rows)

    def remove(self) -> None:
        self.close()
        shutil.rmtree(self.folder, ignore_errors=True)
