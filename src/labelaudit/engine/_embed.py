"""Sentence embeddings of a large dataset: Ray Data ``map_batches`` over a pool of encoders.

Each actor of the pool loads the sentence encoder once (one actor per GPU, or per
``cpus_per_actor`` cores) and embeds the batches it is handed with
:func:`labelaudit.models.encode_texts`; the embeddings come back to the caller in input
order, ready for the cheap classifier heads of :class:`labelaudit.models.EmbedScorer`
(1M items x 384 float32 is 1.5 GB). Nothing here schedules work: Ray Data does.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import numpy as np

from labelaudit._validation import check_int
from labelaudit.engine._source import Source, resolve_source

__all__ = ["embed_stream"]


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
        folder; a path every node can write shares it across a cluster); off by default.
    ray_address : str, optional
        A running cluster; default: Ray started on this machine.

    Returns
    -------
    ndarray of shape (n_samples, dim), float32, L2-normalised rows.
    """
    from labelaudit.engine._chunks import Columns
    from labelaudit.engine._heads import EmbedOptions
    from labelaudit.engine._ray import RayRunner

    cache: str | Path | None | Literal[False] = (None if cache_dir is True else
                                                 False if cache_dir is False else cache_dir)
    chunk_size = check_int(chunk_size, "chunk_size", minimum=1)
    cpus_per_actor = check_int(cpus_per_actor, "cpus_per_actor", minimum=1)
    if actors is not None:
        check_int(actors, "actors", minimum=1)
    options = EmbedOptions(model=model, pair_mode="joint", max_length=max_length,
                           batch_size=batch_size, cache_dir=cache).check()
    src = source if isinstance(source, Source) else resolve_source(source)
    with RayRunner(src, chunk_size=chunk_size, address=ray_address) as runner:
        chunks = runner.embedded(Columns(text, "", text_pair), options, n_rows=0, folder=None,
                                 actors=actors, cpus_per_actor=cpus_per_actor,
                                 gpus_per_actor=gpus_per_actor)
        parts = [vectors for _, vectors in chunks.chunks()]
    return np.concatenate(parts) if parts else np.zeros((0, 0), np.float32)
