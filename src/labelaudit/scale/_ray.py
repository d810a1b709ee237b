"""The Ray engine: Ray Data reads and hashes, Ray tasks fit the folds.

Nothing here schedules work or moves data itself: reading is ``ray.data.read_parquet`` /
``read_csv`` / ``read_json``, hashing is ``Dataset.map_batches`` (in input order, so row
numbers and folds are the same as on the local engine), the hashed rows wait in Ray's
object store (which spills to disk when full), and every fold's model is a ``@ray.remote``
task. Ray is started with every core of this machine, or joined at ``address``.
"""

from __future__ import annotations

import os
import pickle
import socket
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from labelaudit._errors import InvalidParameterError, MissingExtraError
from labelaudit.scale._chunks import Columns, HashedChunk, hash_chunk
from labelaudit.scale._hashing import FoldCounts, FoldPrediction, HashingOptions
from labelaudit.scale._stream import Source

__all__ = ["RayRunner", "connect"]

CONNECT_TIMEOUT_S = 30.0


def _ray() -> Any:
    try:
        import ray
    except ImportError:
        raise MissingExtraError("ray", "scale") from None
    return ray


def _reachable(address: str, timeout_s: float) -> None:
    """Fail fast when ``host:port`` (or ``ray://host:port``) does not accept connections."""
    target = address.split("://", 1)[-1]
    host, _, port = target.rpartition(":")
    if not host or not port.isdigit():
        return  # "auto" or a form Ray resolves itself
    try:
        socket.create_connection((host, int(port)), timeout=min(timeout_s, 10.0)).close()
    except OSError as exc:
        raise InvalidParameterError(
            f"cannot reach the Ray cluster at {address} ({exc.strerror or exc}); check the "
            "address (`ray status` on the head node prints it), or leave --ray-address out to "
            "start Ray on this machine") from None


def connect(address: str | None, *, timeout_s: float = CONNECT_TIMEOUT_S,
            num_cpus: int | None = None) -> bool:
    """Start Ray on this machine (every core), or connect to the cluster at ``address``;
    True when this call started the connection (and should shut it down).

    An address that cannot be reached, or a connection that does not complete within
    ``timeout_s``, is an :class:`InvalidParameterError`.
    """
    ray = _ray()
    if ray.is_initialized():
        return False
    quiet = {"include_dashboard": False, "log_to_driver": False, "logging_level": "ERROR",
             "configure_logging": True}
    if address is None:
        ray.init(num_cpus=num_cpus or os.cpu_count(), **quiet)
        return True
    _reachable(address, timeout_s)
    failure: list[BaseException] = []

    def start() -> None:
        try:
            ray.init(address=address, **({} if address.startswith("ray://") else quiet))
        except BaseException as exc:  # noqa: BLE001 - reported below
            failure.append(exc)

    thread = threading.Thread(target=start, daemon=True)
    thread.start()
    thread.join(timeout_s)
    if thread.is_alive():
        raise InvalidParameterError(
            f"could not connect to the Ray cluster at {address} within {timeout_s:.0f} s; "
            "check the address and that the cluster is up (`ray status`)")
    if failure:
        raise InvalidParameterError(
            f"could not connect to the Ray cluster at {address}: "
            f"{' '.join(str(failure[0]).split())[:300]}") from None
    return True


def _hash_batch(batch: pd.DataFrame, columns: Columns, options: HashingOptions) -> pd.DataFrame:
    """``map_batches`` body: one chunk in, one row holding its pickled HashedChunk out."""
    return pd.DataFrame({"chunk": [pickle.dumps(hash_chunk(batch, columns, options))]})


class ObjectStore:
    """The hashed rows of each bucket as Ray objects (one per chunk and bucket)."""

    def __init__(self, *, n_buckets: int) -> None:
        self.n_buckets = n_buckets
        self.refs: list[list[Any]] = [[] for _ in range(n_buckets)]

    def put(self, bucket: int, rows: np.ndarray, matrix: Any) -> None:
        self.refs[bucket].append(_ray().put((np.asarray(rows, dtype=np.int64), matrix)))

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

        parts = _ray().get(self.refs[bucket]) if self.refs[bucket] else []
        if not parts:
            return sp.csr_matrix((0, 1), dtype=np.float32), np.zeros(0, np.int64)
        matrix = sp.vstack([m for _, m in parts], format="csr") if len(parts) > 1 \
            else parts[0][1]
        return matrix, np.concatenate([r for r, _ in parts])


def _fit_fold_task(fold: int, reader: RefReader, labels: np.ndarray, folds: np.ndarray,
                   idf: np.ndarray, options: HashingOptions, n_classes: int, n_train: int,
                   random_state: int) -> FoldPrediction:
    from labelaudit.scale import _hashing

    return _hashing.fit_fold(fold, reader, labels, folds, idf, options, n_classes=n_classes,
                             n_train=n_train, random_state=random_state, n_jobs=1)


def _fit_tfidf_task(features: np.ndarray, labels: np.ndarray, train: np.ndarray,
                    held_out: np.ndarray, n_classes: int) -> np.ndarray:
    from labelaudit.models import TfidfScorer

    model = TfidfScorer().fit(features[train], labels[train], n_classes=n_classes)
    return model.predict_proba(features[held_out])


class RayRunner:
    """Read with Ray Data and fit folds as Ray tasks (see the module docstring)."""

    name = "ray"

    def __init__(self, source: Source, *, chunk_size: int, address: str | None = None,
                 num_cpus: int | None = None) -> None:
        self.source = source
        self.chunk_size = chunk_size
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
            _ray().shutdown()

    def _dataset(self, columns: Sequence[str] | None) -> Any:
        import ray.data

        paths = list(self.source.paths)
        fmt = self.source.format
        if fmt == "parquet":
            data = ray.data.read_parquet(paths, columns=list(columns) if columns else None)
        elif fmt in ("csv", "tsv"):
            import pyarrow.csv as pcsv

            data = ray.data.read_csv(paths, parse_options=pcsv.ParseOptions(
                delimiter="\t" if fmt == "tsv" else ","))
        else:
            data = ray.data.read_json(paths, lines=True)
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
        """One Ray task per fold; predictions come back as the tasks finish."""
        ray = _ray()
        task = ray.remote(num_cpus=1)(_fit_fold_task)
        labels_ref, folds_ref = ray.put(labels), ray.put(folds)
        reader = store.reader()
        pending = [task.remote(fold, reader, labels_ref, folds_ref, counts.idf(fold), options,
                               n_classes, counts.n_train(fold), random_state) for fold in todo]
        while pending:
            ready, pending = ray.wait(pending, num_returns=1)
            yield ray.get(ready[0])

    def small_scan(self, frame: pd.DataFrame, columns: Columns, *, n_folds: int,
                   random_state: int, top: int | None, threshold: float | None,
                   keep_columns: bool) -> tuple[pd.DataFrame, Any, int]:
        """:func:`labelaudit.scan` with ``scorers=["tfidf"]`` on an in-memory table, its
        stratified folds fitted as Ray tasks."""
        from labelaudit.audit._text_result import warn_if_chance_level
        from labelaudit.io import prepare_text_dataset
        from labelaudit.models import TfidfScorer
        from labelaudit.models._crossfit import make_folds
        from labelaudit.scale._output import (
            extra_columns,
            output_frame,
            output_names,
            score_probs,
        )

        ray = _ray()
        data = prepare_text_dataset(frame, text=columns.text, label=columns.label,
                                    text_pair=columns.text_pair, id=columns.id)
        assert data.labels is not None
        n_classes = len(data.classes)
        fold_ids = make_folds(data.labels, n_folds=n_folds, random_state=random_state,
                              classes=data.classes)
        features = ray.put(TfidfScorer().prepare(data))
        labels = ray.put(data.labels)
        task = ray.remote(num_cpus=1)(_fit_tfidf_task)
        held = [np.flatnonzero(fold_ids == f) for f in np.unique(fold_ids)]
        refs = [task.remote(features, labels, np.flatnonzero(fold_ids != f), rows, n_classes)
                for f, rows in zip(np.unique(fold_ids), held, strict=True)]
        probs = np.zeros((len(data), n_classes))
        for rows, part in zip(held, ray.get(refs), strict=True):
            probs[rows] = part
        scores = score_probs(data.labels, probs, top=top, threshold=threshold)
        warn_if_chance_level(data.labels, scores.pred_probs)
        kept = extra_columns(list(map(str, frame.columns)), columns) if keep_columns else []
        table = output_frame(frame, np.arange(len(frame)), columns=columns,
                             labels=data.labels, classes=data.classes, scores=scores,
                             extras=output_names(kept))
        table = table.iloc[np.argsort(scores.rank, kind="stable")].reset_index(drop=True)
        return table, scores, n_classes
