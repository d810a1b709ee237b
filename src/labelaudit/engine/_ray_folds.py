"""The Ray fold execution: hashed rows and embeddings in Ray's object store, one Ray task
per fold, results as the tasks finish."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from labelaudit.engine._hashing import FoldPrediction, HashingOptions
from labelaudit.engine._ray_connect import import_ray

__all__ = ["ObjectStore", "RefChunks", "RefReader", "as_finished", "fit_fold_task",
           "fit_head_task"]


class ObjectStore:
    """The hashed rows of each bucket as Ray objects (one per chunk and bucket)."""

    def __init__(self, *, n_buckets: int) -> None:
        self.n_buckets = n_buckets
        self.refs: list[list[Any]] = [[] for _ in range(n_buckets)]

    def put(self, bucket: int, rows: np.ndarray, matrix: Any) -> None:
        self.refs[bucket].append(import_ray().put((np.asarray(rows, dtype=np.int64), matrix)))

    def close(self) -> None:
        pass

    def remove(self) -> None:
        self.refs = [[] for _ in range(self.n_buckets)]

    def reader(self) -> RefReader:
        return RefReader(self.refs)


class RefReader:
    """What a fold task gets: the object refs of every bucket, fetched one bucket at a time."""

    def __init__(self, refs: list[list[Any]]) -> None:
        self.refs = refs
        self.n_buckets = len(refs)

    def read(self, bucket: int) -> tuple[Any, np.ndarray]:
        import scipy.sparse as sp

        parts = import_ray().get(self.refs[bucket]) if self.refs[bucket] else []
        if not parts:
            return sp.csr_matrix((0, 1), dtype=np.float32), np.zeros(0, np.int64)
        matrix = sp.vstack([m for _, m in parts], format="csr") if len(parts) > 1 \
            else parts[0][1]
        return matrix, np.concatenate([r for r, _ in parts])


def fit_fold_task(fold: int, reader: RefReader, labels: np.ndarray, folds: np.ndarray,
                   idf: np.ndarray, options: HashingOptions, n_classes: int, n_train: int,
                   random_state: int) -> FoldPrediction:
    from labelaudit.engine import _hashing

    return _hashing.fit_fold(fold, reader, labels, folds, idf, options, n_classes=n_classes,
                             n_train=n_train, random_state=random_state, n_jobs=1)


def fit_head_task(fold: int, chunks: RefChunks, labels: np.ndarray, folds: np.ndarray,
                   options: Any, n_classes: int, random_state: int) -> FoldPrediction:
    from labelaudit.engine._heads import fit_head_fold

    return fit_head_fold(fold, chunks, labels, folds, options, n_classes=n_classes,
                         random_state=random_state)


class RefChunks:
    """The embeddings of the Ray engine: one object in Ray's object store per chunk, so a
    head's task on any node reads them chunk by chunk."""

    def __init__(self, *, pairs: bool) -> None:
        self.pairs = pairs
        self.dim = 0
        self.refs: list[tuple[int, Any]] = []
        self._next = 0

    def append(self, vectors: np.ndarray) -> None:
        if not self.dim:
            self.dim = vectors.shape[1] // 2 if self.pairs else vectors.shape[1]
        self.refs.append((self._next, import_ray().put(np.ascontiguousarray(vectors))))
        self._next += len(vectors)

    @property
    def n_chunks(self) -> int:
        return len(self.refs)

    def chunk(self, index: int) -> tuple[int, np.ndarray]:
        """``(first row, vectors)`` of chunk ``index``."""
        start, ref = self.refs[index]
        return start, import_ray().get(ref)

    def chunks(self) -> Iterator[tuple[int, np.ndarray]]:
        for index in range(self.n_chunks):
            yield self.chunk(index)



def as_finished(pending: list[Any]) -> Iterator[Any]:
    """The results of Ray tasks, each as soon as it finishes."""
    ray = import_ray()
    while pending:
        ready, pending = ray.wait(pending, num_returns=1)
        yield ray.get(ready[0])
