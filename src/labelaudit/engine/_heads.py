"""The embed member of a streamed scan: every item embedded once (through the embedding
cache), then per fold :class:`labelaudit.models.EmbedScorer`'s head fitted on the gathered
embeddings, or out of core on minibatches when they would not fit in memory."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from labelaudit._errors import InvalidParameterError
from labelaudit._validation import check_int, check_number
from labelaudit.engine._hashing import Columns, FoldPrediction
from labelaudit.models import EmbedScorer, encode_texts

if TYPE_CHECKING:
    import pandas as pd

HEAD_MEMORY_MB = 1024  # training features above this (float32) are fitted out of core


@dataclass(frozen=True)
class EmbedOptions:
    """How the embed member of :func:`labelaudit.scanning.scan_stream` encodes and fits.

    Attributes
    ----------
    model, pair_mode, max_length, batch_size
        As :class:`labelaudit.models.EmbedScorer` (default: the packaged all-MiniLM-L6-v2).
    C, cache_dir
        The heads' inverse regularisation (out of core: ``1 / (2 C n_train) ||W||^2``); the
        embedding cache of :func:`labelaudit.models.encode_texts` (on a cluster, shared).
    head_memory_mb
        Above this size of a fold's training features, the head is trained out of core.
    epochs, learning_rate, minibatch
        Out of core: passes over the chunks, Adam's step size, rows per step.

    Examples
    --------
    >>> EmbedOptions().check().head_memory_mb
    1024
    """

    model: str | None = None
    pair_mode: Literal["features", "joint"] = "features"
    max_length: int = 256
    batch_size: int = 32
    C: float = 1.0
    cache_dir: str | Path | None | Literal[False] = None
    head_memory_mb: int = HEAD_MEMORY_MB
    epochs: int = 20
    learning_rate: float = 3e-3
    minibatch: int = 1024

    def check(self) -> EmbedOptions:
        if self.pair_mode not in ("features", "joint"):
            raise InvalidParameterError(
                f"pair_mode must be 'features' or 'joint'; got {self.pair_mode!r}")
        check_int(self.max_length, "max_length", minimum=8)
        check_int(self.batch_size, "batch_size", minimum=1)
        check_number(self.C, "C", low=0.0, low_open=True)
        check_int(self.head_memory_mb, "head_memory_mb", minimum=0)
        check_int(self.epochs, "epochs", minimum=1)
        check_number(self.learning_rate, "learning_rate", low=0.0, low_open=True)
        check_int(self.minibatch, "minibatch", minimum=1)
        return self

    def key(self) -> dict[str, Any]:
        """What changes the member's probabilities (for the resume manifest)."""
        return {"model": self.model, "pair_mode": self.pair_mode,
                "max_length": self.max_length, "C": self.C,
                "head_memory_mb": self.head_memory_mb, "epochs": self.epochs,
                "learning_rate": self.learning_rate, "minibatch": self.minibatch}


def encode_frame(frame: pd.DataFrame, columns: Columns, options: EmbedOptions,
                 encoder: Any) -> np.ndarray:
    """One chunk's embeddings as :meth:`EmbedScorer.prepare` encodes them (pairs in
    ``"features"`` mode side by side, ``[u | v]``), float32."""
    texts = frame[columns.text].astype(str).tolist()
    settings: dict[str, Any] = {"model": options.model, "batch_size": options.batch_size,
                                "max_length": options.max_length,
                                "cache_dir": options.cache_dir, "encoder": encoder}
    if columns.text_pair is None:
        return np.asarray(encode_texts(texts, **settings), dtype=np.float32)
    pairs = frame[columns.text_pair].astype(str).tolist()
    if options.pair_mode == "joint":
        return np.asarray(encode_texts(list(zip(texts, pairs, strict=True)), **settings),
                          dtype=np.float32)
    both = np.asarray(encode_texts(texts + pairs, **settings), dtype=np.float32)
    return np.hstack([both[: len(texts)], both[len(texts):]])


def head_features(vectors: np.ndarray, *, pairs: bool) -> np.ndarray:
    """The heads' input: the vectors, or ``[u, v, |u - v|, u * v]`` for stored pairs.

    Examples
    --------
    >>> head_features(np.array([[1.0, 3.0]]), pairs=True).tolist()
    [[1.0, 3.0, 2.0, 3.0]]
    """
    if not pairs:
        return vectors
    u, v = np.split(vectors, 2, axis=1)
    return np.hstack([u, v, np.abs(u - v), u * v])


def _kept(start: int, vectors: np.ndarray, keep: np.ndarray, pairs: bool,
          ) -> tuple[np.ndarray, np.ndarray] | None:
    """``(features, row numbers)`` of one chunk's rows where ``keep``; None if none."""
    rows = np.arange(start, start + len(vectors))
    mask = keep[rows]
    if not mask.any():
        return None
    return head_features(np.asarray(vectors[mask]), pairs=pairs), rows[mask]


def _train_chunks(chunks: Any, keep: np.ndarray, pairs: bool,
                  ) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """``(features, row numbers)`` of the rows where ``keep``, chunk by chunk."""
    for start, vectors in chunks.chunks():
        part = _kept(start, vectors, keep, pairs)
        if part is not None:
            yield part


def fit_head_fold(fold: int, chunks: Any, labels: np.ndarray, folds: np.ndarray,
                  options: EmbedOptions, *, n_classes: int, random_state: int,
                  ) -> FoldPrediction:
    """Fit fold ``fold``'s head on the other folds' embeddings and predict its own rows:
    EmbedScorer's head, or above ``head_memory_mb`` :func:`_minibatch_head` (Adam, not
    ``SGDClassifier``, whose one-vs-rest lost two thirds of the AP on 20 Newsgroups:
    ``python -m benchmarks.scale_cost --embed``)."""
    pairs = bool(chunks.pairs)
    train = folds != fold
    n_train = int(train.sum())
    width = chunks.dim * (2 if pairs else 1)
    if n_train * width * 4 <= options.head_memory_mb * 2**20:
        parts = list(_train_chunks(chunks, train, pairs))
        features = np.concatenate([f for f, _ in parts])
        rows = np.concatenate([r for _, r in parts])
        del parts
        model: Any = EmbedScorer(C=options.C).fit(features, labels[rows], n_classes=n_classes)
        del features
        predict = model.predict_proba
    else:
        predict = _minibatch_head(chunks, train, labels, options, pairs=pairs,
                                  n_classes=n_classes, n_train=n_train,
                                  random_state=random_state)
    held_rows, held_probs = [], []
    for features, rows in _train_chunks(chunks, ~train, pairs):
        held_rows.append(rows)
        held_probs.append(predict(features).astype(np.float32))
    return FoldPrediction.of(fold, held_rows, held_probs, n_classes)


def _minibatch_head(chunks: Any, train: np.ndarray, labels: np.ndarray,
                    options: EmbedOptions, *, pairs: bool, n_classes: int, n_train: int,
                    random_state: int) -> Any:
    """The out-of-core head's ``predict_proba``: a scaler fitted chunk by chunk, then softmax
    regression with logistic regression's L2 penalty trained by Adam, chunks in seeded order."""
    import torch
    from sklearn.preprocessing import StandardScaler

    scaler = StandardScaler()
    width = 0
    for features, _ in _train_chunks(chunks, train, pairs):
        scaler.partial_fit(features)
        width = features.shape[1]
    torch.manual_seed(random_state)
    layer = torch.nn.Linear(width, n_classes)
    optimiser = torch.optim.Adam(layer.parameters(), lr=options.learning_rate)
    penalty = 1.0 / (options.C * max(n_train, 1))
    for epoch in range(options.epochs):
        rng = np.random.default_rng([random_state, epoch])
        for features, rows in _shuffled(chunks, train, pairs, rng):
            inputs = torch.from_numpy(scaler.transform(features).astype(np.float32))
            targets = torch.from_numpy(labels[rows].astype(np.int64))
            for start in range(0, len(rows), options.minibatch):
                batch = slice(start, start + options.minibatch)
                loss = torch.nn.functional.cross_entropy(layer(inputs[batch]), targets[batch])
                loss = loss + 0.5 * penalty * (layer.weight ** 2).sum()
                optimiser.zero_grad()
                loss.backward()
                optimiser.step()

    def predict(features: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            logits = layer(torch.from_numpy(scaler.transform(features).astype(np.float32)))
            return torch.softmax(logits, dim=1).numpy().astype(np.float64)

    return predict


def _shuffled(chunks: Any, train: np.ndarray, pairs: bool, rng: np.random.Generator,
              ) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """The training chunks in a random order, each one's rows shuffled."""
    for index in rng.permutation(chunks.n_chunks):
        start, vectors = chunks.chunk(int(index))
        part = _kept(start, vectors, train, pairs)
        if part is not None:
            order = rng.permutation(len(part[1]))
            yield part[0][order], part[1][order]


class Chunks:
    """Embeddings read back chunk by chunk: ``chunk(index)`` is ``(first row, vectors)``."""

    n_chunks: int

    def chunk(self, index: int) -> tuple[int, np.ndarray]:
        raise NotImplementedError

    def chunks(self) -> Iterator[tuple[int, np.ndarray]]:
        for index in range(self.n_chunks):
            yield self.chunk(index)


class MemmapChunks(Chunks):
    """The embeddings of the local engine: one ``.npy`` file, ``chunk_size`` rows a chunk."""

    def __init__(self, path: Path, n_rows: int, *, chunk_size: int, pairs: bool) -> None:
        self.path, self.n_rows, self.chunk_size, self.pairs = path, n_rows, chunk_size, pairs
        self.dim = 0
        self._array: Any = None
        self._next = 0

    def append(self, vectors: np.ndarray) -> None:
        if self._array is None:
            width = vectors.shape[1]
            self.dim = width // 2 if self.pairs else width
            self._array = np.lib.format.open_memmap(self.path, mode="w+", dtype=np.float32,
                                                    shape=(self.n_rows, width))
        self._array[self._next:self._next + len(vectors)] = vectors
        self._next += len(vectors)

    def close(self) -> None:
        if self._array is not None:
            self._array.flush()
            self._array = None

    @property
    def n_chunks(self) -> int:  # type: ignore[override]
        return -(-self.n_rows // self.chunk_size)

    def chunk(self, index: int) -> tuple[int, np.ndarray]:
        start = index * self.chunk_size
        return start, np.load(self.path, mmap_mode="r")[start:start + self.chunk_size]
