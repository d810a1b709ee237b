"""One chunk of rows turned into hashed features, and the checks that span all chunks.

:func:`hash_chunk` runs where the chunk was read (this process, or a Ray Data worker) and
returns a small picklable :class:`HashedChunk`; :class:`Collector` runs once, in input
order, and holds what must be known about every item: its encoded label, its fold, a
64-bit hash of its id, and the per-fold document frequencies. Texts are never kept.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from labelaudit._errors import InvalidInputError, format_rows
from labelaudit.engine._hashing import FoldCounts, HashingOptions, bucket_ids, fold_ids, hash_texts
from labelaudit.io import label_problem
from labelaudit.models import check_fold_count

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["Collector", "Columns", "HashedChunk", "hash_chunk", "label_values"]


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


def _kind(value: object) -> str:
    if isinstance(value, (bool, np.bool_)):
        return "bool"
    if isinstance(value, (int, float, np.integer, np.floating)):
        return "number"
    return type(value).__name__


def label_values(series: pd.Series) -> tuple[np.ndarray, frozenset[str]]:
    """Label values as :func:`labelaudit.io.encode_labels` reads them (whole floats as
    integers), with the kinds of values seen."""
    raw = series.to_numpy(dtype=object)
    kinds = frozenset("number" if k == "number" else k for k in map(_kind, raw))
    if kinds == {"number"}:
        floats = np.asarray(raw, dtype=float)
        return (floats.astype(np.int64) if np.all(floats == np.round(floats)) else floats), kinds
    return raw, kinds


def _texts(values: pd.Series) -> tuple[list[str], np.ndarray]:
    missing = values.isna().to_numpy()
    as_text = values.where(~missing, "").astype(str)
    empty = missing | (as_text.str.strip() == "").to_numpy()
    return as_text.tolist(), empty


def hash_chunk(frame: pd.DataFrame, columns: Columns, options: HashingOptions) -> HashedChunk:
    """Check one chunk and hash its texts; problems are reported, not raised, so that the
    collector can name rows by their position in the whole input."""
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
        id_kinds = frozenset(map(_kind, ids[~missing_ids].tolist()))
        id_hashes = pd.util.hash_array(ids.to_numpy(dtype=object))
    texts, empty = _texts(frame[columns.text])
    if empty.any():
        report(f"column {columns.text!r} has empty or missing text in {{rows}}; drop or fill "
               "those rows", empty)
    pairs = None
    if columns.text_pair is not None:
        pairs, empty_pairs = _texts(frame[columns.text_pair])
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
    """Everything kept about every item while the chunks stream by, in input order.

    ``put(bucket, rows, matrix)`` stores a bucket's share of each chunk (a folder or the
    Ray object store).
    """

    columns: Columns
    options: HashingOptions
    n_folds: int
    random_state: int
    put: Callable[[int, np.ndarray, Any], None]
    n_rows: int = 0
    counts: FoldCounts | None = None
    _codes: list[np.ndarray] = field(default_factory=list)
    _values: dict[Any, int] = field(default_factory=dict)
    _label_kinds: set[str] = field(default_factory=set)
    _id_hashes: list[np.ndarray] = field(default_factory=list)
    _id_kinds: dict[str, int] = field(default_factory=dict)

    def add(self, chunk: HashedChunk) -> None:
        """Take the next chunk: check it, encode its labels, count its document
        frequencies per fold and store its rows by bucket."""
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
        buckets = bucket_ids(rows, n_buckets=self.options.n_buckets,
                             random_state=self.random_state)
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
        """``(labels, classes, folds)`` of all rows: labels as indices into the sorted
        classes (the order of :class:`labelaudit.io.TextDataset`).

        Raises :class:`InvalidInputError` for no rows, fewer than two classes, a class with a
        single item and duplicate ids.
        """
        if self.n_rows == 0:
            raise InvalidInputError("the table has no rows")
        values = list(self._values)
        classes = np.unique(np.array(values, dtype=object if "str" in self._label_kinds
                                     else None))
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
