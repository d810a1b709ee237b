"""Sentence embeddings of a large dataset: Ray Data ``map_batches`` over a pool of encoders.

Each actor of the pool loads the sentence encoder once (one actor per GPU, or per
``cpus_per_actor`` cores) and embeds the batches it is handed with
:func:`labelaudit.models.encode_texts`; the embeddings come back to the caller in input
order, ready for the cheap classifier heads of :class:`labelaudit.models.EmbedScorer`
(1M items x 384 float32 is 1.5 GB). Nothing here schedules work: Ray Data does.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from labelaudit._validation import check_int
from labelaudit.scale._stream import Source, resolve_source

__all__ = ["embed_stream"]


class _Encode:
    """The body of one pool actor: an encoder loaded once, used for every batch."""

    def __init__(self, *, text: str, text_pair: str | None, model: str | None,
                 max_length: int, batch_size: int, cache_dir: str | bool | None,
                 device: str | None,
                 ) -> None:
        from labelaudit.models._encoder import load_sentence_encoder

        self.text, self.text_pair = text, text_pair
        self.options: dict[str, Any] = {"model": model, "max_length": max_length,
                                        "batch_size": batch_size, "cache_dir": cache_dir}
        self.encoder = load_sentence_encoder(model, device=device)

    def __call__(self, batch: pd.DataFrame) -> dict[str, np.ndarray]:
        from labelaudit.models import encode_texts

        texts: Any = batch[self.text].astype(str).tolist()
        if self.text_pair is not None:
            texts = list(zip(texts, batch[self.text_pair].astype(str).tolist(), strict=True))
        vectors = encode_texts(texts, encoder=self.encoder, **self.options)
        return {"embedding": np.asarray(vectors, dtype=np.float32)}


def embed_stream(
    source: str | Path | list[str | Path] | Source, *, text: str = "text",
    text_pair: str | None = None, model: str | None = None, max_length: int = 256,
    batch_size: int = 32, chunk_size: int = 4096, actors: int | None = None,
    cpus_per_actor: int = 1, gpus_per_actor: float | None = None,
    cache_dir: str | Path | bool = False, ray_address: str | None = None,
) -> np.ndarray:
    """Sentence embeddings of every row of a dataset, in input order, with Ray.

    Parameters
    ----------
    source : path, glob, folder, list or URI
        As for :func:`scan_stream`.
    text, text_pair : str
        Columns; pairs are encoded jointly (``[CLS] a [SEP] b [SEP]``).
    model, max_length, batch_size
        The encoder (default: the packaged all-MiniLM-L6-v2) and its options, as in
        :func:`labelaudit.models.encode_texts`.
    chunk_size : int
        Rows per batch handed to an actor.
    actors : int, optional
        Size of the actor pool: by default one per GPU of the cluster, or, without GPUs,
        half the cluster's CPUs divided by ``cpus_per_actor`` (the other half reads).
    cpus_per_actor : int
    gpus_per_actor : float, optional
        Default 1 when the cluster has GPUs, else 0.
    cache_dir : path or bool
        The embedding cache of :func:`~labelaudit.models.encode_texts` (True: its default
        folder); off by default, because each call reads every shard of the cache, which
        is slow at millions of items.
    ray_address : str, optional
        A running cluster; default: Ray started on this machine.

    Returns
    -------
    ndarray of shape (n_samples, dim), float32, L2-normalised rows.
    """
    from labelaudit.scale._ray import RayRunner, _ray

    cache: str | bool | None = None if cache_dir is True else (
        str(cache_dir) if isinstance(cache_dir, Path) else cache_dir)
    chunk_size = check_int(chunk_size, "chunk_size", minimum=1)
    cpus_per_actor = check_int(cpus_per_actor, "cpus_per_actor", minimum=1)
    src = source if isinstance(source, Source) else resolve_source(source)
    with RayRunner(src, chunk_size=chunk_size, address=ray_address) as runner:
        from ray.data import ActorPoolStrategy

        resources = _ray().cluster_resources()
        gpus = float(resources.get("GPU", 0)) if gpus_per_actor is None else gpus_per_actor
        per_actor = 1.0 if gpus_per_actor is None and gpus else float(gpus_per_actor or 0)
        if actors is None:
            actors = (int(gpus // per_actor) if per_actor else
                      max(1, int(resources.get("CPU", 1)) // 2 // cpus_per_actor))
        check_int(actors, "actors", minimum=1)
        columns = [c for c in (text, text_pair) if c is not None]
        data = runner._dataset(columns).map_batches(
            _Encode, batch_size=chunk_size, batch_format="pandas",
            compute=ActorPoolStrategy(size=actors), num_cpus=cpus_per_actor,
            num_gpus=per_actor,
            fn_constructor_kwargs={
                "text": text, "text_pair": text_pair, "model": model,
                "max_length": max_length, "batch_size": batch_size,
                "cache_dir": cache,
                "device": "cuda" if per_actor else None})
        parts = [batch["embedding"] for batch in data.iter_batches(batch_size=None,
                                                                   batch_format="numpy")]
    return np.concatenate(parts) if parts else np.zeros((0, 0), np.float32)
