"""The Ray engine: Ray Data reads and hashes (in input order, so folds are the local engine's),
the hashed rows wait in Ray's object store, and each fold is a ``@ray.remote`` task."""

from __future__ import annotations

import pickle
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from labelaudit.engine import _hashing
from labelaudit.engine._hashing import (
    Columns,
    FoldCounts,
    FoldPrediction,
    HashedChunk,
    HashingOptions,
    hash_chunk,
)
from labelaudit.engine._heads import Chunks, encode_frame, fit_head_fold
from labelaudit.engine._source import Source, split_query
from labelaudit.models import connect, import_ray, load_sentence_encoder

if TYPE_CHECKING:
    import pandas as pd


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
    """A fold task's view of the store: every bucket's refs, fetched one bucket at a time."""

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
    return _hashing.fit_fold(fold, reader, labels, folds, idf, options, n_classes=n_classes,
                             n_train=n_train, random_state=random_state, n_jobs=1)


def fit_head_task(fold: int, chunks: RefChunks, labels: np.ndarray, folds: np.ndarray,
                   options: Any, n_classes: int, random_state: int) -> FoldPrediction:
    return fit_head_fold(fold, chunks, labels, folds, options, n_classes=n_classes,
                         random_state=random_state)


class RefChunks(Chunks):
    """The embeddings of the Ray engine: one object per chunk, read by a task on any node."""

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
    def n_chunks(self) -> int:  # type: ignore[override]
        return len(self.refs)

    def chunk(self, index: int) -> tuple[int, np.ndarray]:
        start, ref = self.refs[index]
        return start, import_ray().get(ref)


def as_finished(pending: list[Any]) -> Iterator[Any]:
    """The results of Ray tasks, each as soon as it finishes."""
    ray = import_ray()
    while pending:
        ready, pending = ray.wait(pending, num_returns=1)
        yield ray.get(ready[0])


def _hash_batch(batch: pd.DataFrame, columns: Columns, options: HashingOptions) -> pd.DataFrame:
    """``map_batches`` body: one chunk in, one row holding its pickled HashedChunk out."""
    import pandas as pd
    return pd.DataFrame({"chunk": [pickle.dumps(hash_chunk(batch, columns, options))]})


class _EncodeFrames:
    """The body of one actor of the encoding pool: the encoder loaded once."""

    def __init__(self, *, columns: Columns, options: Any, device: str | None) -> None:
        self.columns, self.options = columns, options
        self.encoder = load_sentence_encoder(options.model, device=device)

    def __call__(self, batch: pd.DataFrame) -> dict[str, np.ndarray]:
        return {"embedding": encode_frame(batch, self.columns, self.options, self.encoder)}


def encoder_pool(cluster: dict[str, float], *, actors: int | None = None,
                 cpus_per_actor: int = 1, gpus_per_actor: float | None = None,
                 ) -> tuple[int, float]:
    """``(actors, GPUs per actor)``: one actor per GPU, or half the CPUs over
    ``cpus_per_actor`` (the other half reads and feeds them).

    Examples
    --------
    >>> encoder_pool({"CPU": 16.0, "GPU": 4.0})
    (4, 1.0)
    >>> encoder_pool({"CPU": 16.0})
    (8, 0.0)
    """
    gpus = float(cluster.get("GPU", 0))
    per_actor = (1.0 if gpus else 0.0) if gpus_per_actor is None else float(gpus_per_actor)
    if actors is None:
        actors = (max(1, int(gpus // per_actor)) if per_actor else
                  max(1, int(cluster.get("CPU", 1)) // 2 // cpus_per_actor))
    return actors, per_actor


class RayRunner:
    """Read with Ray Data and fit folds as Ray tasks, on a new local Ray or at ``address``."""

    name = "ray"

    def __init__(self, source: Source, *, chunk_size: int, address: str | None = None,
                 num_cpus: int | None = None, text: Sequence[str] = ()) -> None:
        self.source = source
        self.chunk_size = chunk_size
        self.text = tuple(text)  # columns read as text from CSV (the id column)
        self.address = address
        self.num_cpus = num_cpus
        self._owned = False

    def __enter__(self) -> RayRunner:
        import logging

        self._owned = connect(self.address, num_cpus=self.num_cpus)
        from ray.data import DataContext

        context = DataContext.get_current()
        context.execution_options.preserve_order = True
        context.enable_progress_bars = False
        logger = logging.getLogger("ray.data")
        self._level = logger.level
        logger.setLevel(logging.ERROR)  # no INFO line per dataset on the user's stderr
        return self

    def __exit__(self, *exc: object) -> None:
        import logging

        logging.getLogger("ray.data").setLevel(self._level)
        if self._owned:
            import_ray().shutdown()

    def _dataset(self, columns: Sequence[str] | None) -> Any:
        import ray.data

        paths = list(self.source.paths)
        fmt = self.source.format
        where: dict[str, Any] = {}
        if any(split_query(p)[1] for p in paths):  # ?endpoint_override=...: Ray Data would
            import pyarrow.fs as pafs  # read the query as part of the key

            where["filesystem"] = pafs.FileSystem.from_uri(paths[0])[0]
            paths = [pafs.FileSystem.from_uri(p)[1] for p in paths]
        if fmt == "parquet":
            data = ray.data.read_parquet(paths, columns=list(columns) if columns else None, **where)
        elif fmt in ("csv", "tsv"):
            import pyarrow as pa
            import pyarrow.csv as pcsv

            data = ray.data.read_csv(paths, parse_options=pcsv.ParseOptions(
                delimiter="\t" if fmt == "tsv" else ","), convert_options=pcsv.ConvertOptions(
                column_types=dict.fromkeys(self.text, pa.string())), **where)
        else:
            data = ray.data.read_json(paths, lines=True, **where)
        if columns and fmt != "parquet":
            data = data.select_columns(list(columns))
        return data

    def at_most(self, columns: Columns, limit: float) -> int | None:
        count = int(self._dataset(columns.needed[:1]).count())
        return count if count <= limit else None

    def frames(self, columns: Sequence[str] | None = None) -> Iterator[pd.DataFrame]:
        for batch in self._dataset(columns).iter_batches(batch_size=self.chunk_size,
                                                         batch_format="pandas"):
            if len(batch):
                yield batch

    def hashed(self, columns: Columns, options: HashingOptions) -> Iterator[HashedChunk]:
        data = self._dataset(columns.needed).map_batches(
            _hash_batch, batch_size=self.chunk_size, batch_format="pandas",
            fn_kwargs={"columns": columns, "options": options})
        for batch in data.iter_batches(batch_size=None, batch_format="pandas"):
            for payload in batch["chunk"]:
                chunk = pickle.loads(payload)  # noqa: S301 - made by _hash_batch above
                if chunk.n_rows:
                    yield chunk

    def store(self, folder: Path, *, n_buckets: int) -> ObjectStore:
        return ObjectStore(n_buckets=n_buckets)

    def fit_folds(self, todo: Sequence[int], store: ObjectStore, labels: np.ndarray,
                  folds: np.ndarray, counts: FoldCounts, options: HashingOptions, *,
                  n_classes: int, random_state: int) -> Iterator[FoldPrediction]:
        ray = import_ray()
        task = ray.remote(num_cpus=1)(fit_fold_task)
        labels_ref, folds_ref = ray.put(labels), ray.put(folds)
        reader = store.reader()
        return as_finished([task.remote(fold, reader, labels_ref, folds_ref, counts.idf(fold),
                                         options, n_classes, counts.n_train(fold),
                                         random_state) for fold in todo])

    def embedded(self, columns: Columns, options: Any, *, n_rows: int, folder: Path | None,
                 progress: Any = None, actors: int | None = None, cpus_per_actor: int = 1,
                 gpus_per_actor: float | None = None, keep: bool = True) -> RefChunks:
        """Every row's embedding from a pool of encoder actors, kept by chunk (with ``keep``
        False only encoded into the embedding cache)."""
        from ray.data import ActorPoolStrategy

        actors, per_actor = encoder_pool(import_ray().cluster_resources(), actors=actors,
                                         cpus_per_actor=cpus_per_actor,
                                         gpus_per_actor=gpus_per_actor)
        needed = [c for c in (columns.text, columns.text_pair) if c]
        data = self._dataset(needed).map_batches(
            _EncodeFrames, batch_size=self.chunk_size, batch_format="pandas",
            compute=ActorPoolStrategy(size=actors), num_cpus=cpus_per_actor,
            num_gpus=per_actor,
            # an encoder actor that dies fails the pass (a rerun finds what was encoded in
            # the cache); with restarts, Ray logs an error line per actor at creation
            # (ray-project/ray#53727)
            max_restarts=0,
            fn_constructor_kwargs={"columns": columns, "options": options,
                                   "device": "cuda" if per_actor else None})
        chunks = RefChunks(pairs=columns.text_pair is not None and options.pair_mode == "features")
        for batch in data.iter_batches(batch_size=None, batch_format="numpy"):
            if keep:
                chunks.append(batch["embedding"])
            if progress is not None:
                progress(len(batch["embedding"]))
        return chunks

    def fit_heads(self, todo: Sequence[int], chunks: RefChunks, labels: np.ndarray,
                  folds: np.ndarray, options: Any, *, n_classes: int,
                  random_state: int) -> Iterator[FoldPrediction]:
        ray = import_ray()
        task = ray.remote(num_cpus=1)(fit_head_task)
        labels_ref, folds_ref = ray.put(labels), ray.put(folds)
        return as_finished([task.remote(fold, chunks, labels_ref, folds_ref, options,
                                         n_classes, random_state) for fold in todo])
