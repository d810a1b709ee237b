"""Instance-dependent noise on hard cases found by sentence-embedding similarity (NoisywikiHow)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from labelaudit._errors import InvalidInputError
from labelaudit.noise._common import Flips, NoiseData, Shortfall


def nearest_other_class(
    embeddings: np.ndarray, labels: np.ndarray, *, texts: Sequence[str] | None = None,
    block_size: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """For every item, the most similar item of another class and their cosine similarity.

    Implements equations (1) and (2) of Wu et al. (2023):
    ``x~ = argmax_{x'} cosine(v_x, v_x'), (x', y') in D_n`` and ``s_x = cosine(v_x, v_x~)``,
    with the candidate set ``D_n`` the items whose label differs from ``y`` (and, when
    ``texts`` is given, whose text differs from ``x``, so a swap always changes the text).
    No neighbour gives row -1 and ``-inf``; ``block_size`` rows are compared at once
    (default about 2e7 similarities, ~160 MB).

    Examples
    --------
    >>> vectors = np.array([[1.0, 0.0], [0.9, 0.1], [0.0, 1.0], [0.1, 1.0]])
    >>> neighbours, sims = nearest_other_class(vectors, np.array([0, 1, 1, 0]))
    >>> neighbours.tolist(), sims.round(3).tolist()
    ([1, 0, 3, 2], [0.994, 0.994, 0.995, 0.995])
    """
    import pandas as pd
    vectors = np.asarray(embeddings, dtype=np.float64)
    labels = np.asarray(labels)
    if vectors.ndim != 2 or len(vectors) != len(labels):
        raise InvalidInputError(
            f"embeddings must have shape (n_samples, dim) with n_samples = {len(labels)}; "
            f"got {vectors.shape}"
        )
    if not np.all(np.isfinite(vectors)):
        raise InvalidInputError("embeddings must be finite numbers")
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    unit = vectors / np.where(norms > 0, norms, 1.0)
    text_codes = (pd.factorize(pd.Series(list(texts), dtype=object))[0]
                  if texts is not None else None)
    n = len(labels)
    if block_size is None:
        block_size = int(max(1, min(4096, 20_000_000 // max(n, 1))))
    neighbours = np.full(n, -1, dtype=np.int64)
    similarity = np.full(n, -np.inf)
    for start in range(0, n, block_size):
        stop = min(n, start + block_size)
        sims = unit[start:stop] @ unit.T
        blocked = labels[start:stop, None] == labels[None, :]
        if text_codes is not None:
            blocked |= text_codes[start:stop, None] == text_codes[None, :]
        sims[blocked] = -np.inf
        best = np.argmax(sims, axis=1)
        found = np.isfinite(sims[np.arange(stop - start), best])
        neighbours[start:stop] = np.where(found, best, -1)
        similarity[start:stop] = np.where(found, sims[np.arange(stop - start), best], -np.inf)
    return neighbours, similarity


def _neighbours(data: NoiseData) -> tuple[np.ndarray, np.ndarray]:
    if "neighbours" not in data.cache:
        if data.embeddings is None:  # pragma: no cover - inject_noise always embeds first
            raise InvalidInputError("instance-dependent noise needs embeddings or texts")
        texts = data.texts if data.swap_input else None
        data.cache["neighbours"] = nearest_other_class(data.embeddings, data.labels, texts=texts)
    return data.cache["neighbours"]


def instance_dependent_flips(data: NoiseData, eligible: np.ndarray, count: int,
                             rng: np.random.Generator) -> Flips:
    """Noise the ``count`` hardest eligible items, hardness being similarity to another class.

    NoisywikiHow (Wu et al. 2023, section 3.3): "all instances ... are arranged in
    decreasing order of s_x, with the top t of the samples in each source considered hard
    cases. We inject instance-dependent noise by replacing x for each hard case with x~."
    By default the hard case takes the label of its nearest other-class item (a label
    flip, ``P(y~ | y, x)``); with ``swap_input`` it keeps its label and takes that item's
    text instead, the paper's own variant. Ties go to the earlier row; ``rng`` is unused.
    Unlike the paper, ``x~`` comes from the dataset itself, and since similarity is symmetric
    the hardest cases often come as mutual pairs (three in four flips at 5% on RTE).
    """
    neighbours, similarity = _neighbours(data)
    candidates = np.flatnonzero(eligible & (neighbours >= 0))
    if count > len(candidates):
        raise Shortfall(len(candidates), "items need an item of another class"
                        + (" with a different text" if data.swap_input else ""))
    order = np.lexsort((candidates, -similarity[candidates]))[:count]
    items = np.sort(candidates[order])
    if data.swap_input:
        return Flips.of(items, data.labels[items], text_from=neighbours[items])
    return Flips.of(items, data.labels[neighbours[items]])
