"""The local engine: this process reads, hashes and fits, one chunk and one fold at a time."""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from labelaudit.engine import _hashing
from labelaudit.engine._hashing import (
    Columns,
    FoldCounts,
    FolderStore,
    FoldPrediction,
    HashedChunk,
    HashingOptions,
    hash_chunk,
)
from labelaudit.engine._heads import EmbedOptions, MemmapChunks, encode_frame, fit_head_fold
from labelaudit.engine._source import Source, iter_frames
from labelaudit.models import load_sentence_encoder

if TYPE_CHECKING:
    import pandas as pd


class LocalRunner:
    """Chunks read here, folds fitted in turn (each on ``n_jobs`` threads)."""

    name = "local"

    def __init__(self, source: Source, *, chunk_size: int, n_jobs: int | None = None,
                 text: Sequence[str] = ()) -> None:
        self.source = source
        self.chunk_size = chunk_size
        self.text = tuple(text)  # columns read as text from CSV (the id column)
        self.n_jobs = n_jobs if n_jobs is not None else os.cpu_count() or 1
        self._buffer: list[pd.DataFrame] = []
        self._rest: Iterator[pd.DataFrame] = iter(())

    def __enter__(self) -> LocalRunner:
        return self

    def __exit__(self, *exc: object) -> None:
        self._buffer, self._rest = [], iter(())

    def at_most(self, columns: Columns, limit: int) -> int | None:
        """The number of rows if at most ``limit``, else None (the chunks read are kept
        for :meth:`hashed`: a big input is read once)."""
        rest = iter_frames(self.source, columns=columns.needed, chunk_size=self.chunk_size,
                           text=self.text)
        buffer, count = [], 0
        for frame in rest:
            buffer.append(frame)
            count += len(frame)
            if count > limit:
                self._buffer, self._rest = buffer, rest
                return None
        self._buffer, self._rest = [], iter(())  # small: scan() reads it again, whole
        return count

    def frames(self, columns: Sequence[str] | None = None) -> Iterator[pd.DataFrame]:
        return iter_frames(self.source, columns=columns, chunk_size=self.chunk_size, text=self.text)

    def hashed(self, columns: Columns, options: HashingOptions) -> Iterator[HashedChunk]:
        """The chunks hashed, in input order (the ones :meth:`at_most` read first)."""
        buffer, self._buffer = self._buffer, []
        if not buffer:
            self._rest = iter_frames(self.source, columns=columns.needed,
                                     chunk_size=self.chunk_size, text=self.text)
        while buffer:
            yield hash_chunk(buffer.pop(0), columns, options)
        for frame in self._rest:
            yield hash_chunk(frame, columns, options)

    def store(self, folder: Path, *, n_buckets: int) -> FolderStore:
        return FolderStore(folder, n_buckets=n_buckets)

    def fit_folds(self, todo: Sequence[int], store: Any, labels: np.ndarray,
                  folds: np.ndarray, counts: FoldCounts, options: HashingOptions, *,
                  n_classes: int, random_state: int) -> Iterator[FoldPrediction]:
        for fold in todo:
            yield _hashing.fit_fold(fold, store, labels, folds, counts.idf(fold), options,
                                    n_classes=n_classes, n_train=counts.n_train(fold),
                                    random_state=random_state, n_jobs=self.n_jobs)

    def embedded(self, columns: Columns, options: EmbedOptions, *, n_rows: int, folder: Path,
                 progress: Any = None) -> MemmapChunks:
        """Every row's embedding, encoded chunk by chunk into one file under ``folder``."""
        encoder = load_sentence_encoder(options.model)
        pairs = columns.text_pair is not None and options.pair_mode == "features"
        chunks = MemmapChunks(folder / "embeddings.npy", n_rows, chunk_size=self.chunk_size,
                              pairs=pairs)
        for frame in self.frames([c for c in (columns.text, columns.text_pair) if c]):
            chunks.append(encode_frame(frame, columns, options, encoder))
            if progress is not None:
                progress(len(frame))
        chunks.close()
        return chunks

    def fit_heads(self, todo: Sequence[int], chunks: MemmapChunks, labels: np.ndarray,
                  folds: np.ndarray, options: EmbedOptions, *, n_classes: int,
                  random_state: int) -> Iterator[FoldPrediction]:
        for fold in todo:
            yield fit_head_fold(fold, chunks, labels, folds, options, n_classes=n_classes,
                                random_state=random_state)
