"""``scan_stream``: a scan of a dataset too big for memory, chunk by chunk (the engine is
:mod:`._streamed`; ``labelaudit.scan(data, out=...)`` runs it too)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from labelaudit.engine import EmbedOptions, HashingOptions
from labelaudit.scanning._streamed import HASHING_THRESHOLD, StreamScanResult, stream_chunks
from labelaudit.scanning._text import scan

__all__ = ["scan_stream"]


def scan_stream(
    source: str | Path | list[str | Path], *, text: str = "text", label: str = "label",
    text_pair: str | None = None, id: str | None = None,  # noqa: A002 - mirrors the CLI flag
    out: str | Path, scorers: Sequence[str] | None = None,
    engine: Literal["local", "ray"] = "local",
    ray_address: str | None = None, chunk_size: int = 100_000, n_folds: int = 5,
    random_state: int | None = 0, top: int | None = None, threshold: float | None = None,
    resume: bool = True, progress: bool | None = None,
    tfidf: Literal["auto", "memory", "hashing"] = "auto",
    hashing_threshold: int = HASHING_THRESHOLD, hashing: HashingOptions | None = None,
    embed: EmbedOptions | None = None, screen: int = 2000,
    keep_columns: bool = True, checkpoint_dir: str | Path | None = None,
    overwrite: bool = False,
) -> StreamScanResult:
    """Rank every item of a large text dataset by how likely its label is wrong, reading
    and writing it in chunks.

    ``labelaudit.scan(source, out=out)`` runs this too, with the defaults of the
    out-of-core options (``tfidf``, ``hashing_threshold``, ``hashing``). Up to
    ``hashing_threshold`` items (``tfidf="auto"``), this is exactly
    ``labelaudit.scan(data, scorers=scorers)`` in memory, written in chunks (with the Ray
    engine, its folds are Ray tasks). Above it, the texts are hashed chunk by chunk
    (:class:`HashingOptions`: no vocabulary, fixed memory), the hashed rows wait on disk (or
    in Ray's object store), and each of ``n_folds`` TF-IDF models is trained out of core by
    SGD on the rows of the other folds (folds from a seeded hash of the row number), so no
    item is scored by a model that saw it, nor by an idf that counted it. The ``embed``
    member embeds every row once, chunk by chunk (a pool of Ray actors on the Ray engine,
    one per GPU), through the embedding cache, and fits its logistic-regression heads per
    fold on the gathered embeddings, or out of core by SGD when they are too big
    (:class:`EmbedOptions`). Only labels, fold ids and the out-of-sample probabilities,
    shape (n_samples, n_classes) per member, are held for every item; the members are
    averaged with weights fitted to their out-of-sample loss, and the output is written
    most suspect first by an external sort. Flags, scores and the estimated error count
    are computed as :func:`labelaudit.scan` computes them.

    Parameters
    ----------
    source : path, glob, folder or list of paths
        Parquet, CSV, TSV or JSON-lines files: one file, a folder of them, a glob
        (``"data/part-*.parquet"``), a list, or the same as a URI that pyarrow opens
        (``s3://bucket/data/``, ``gs://...``, ``file://...``). Every file needs the same
        columns.
    text, label, text_pair, id : str
        Column names; ``id`` defaults to a column named ``id`` when there is one, else the
        row number (0-based, in input order).
    scorers : sequence of {"tfidf", "embed"}, optional
        The members; None is :func:`labelaudit.scan`'s default (tfidf and embed), each
        first tried on a stratified sample of ``screen`` items and skipped when its
        ensemble weight there is below 0.05 (encoding every item is the slow part: on a
        CPU, MiniLM embeds about 150 short texts a second, so millions of items want GPUs
        or a cluster, or ``scorers=["tfidf"]``).
    out : path or URI
        The output file (``.parquet``, ``.csv``, ``.tsv``, ``.jsonl``, ``.json``), written
        to a temporary file and renamed into place; or a folder of Parquet parts, in rank
        order (a path ending in ``/``, or a URI such as ``s3://bucket/issues/``). An
        existing file or folder is replaced only if it is a labelaudit scan output.
    engine : {"local", "ray"}
        ``"ray"`` reads and hashes with Ray Data (``map_batches``) and fits each fold as a
        Ray task: on a local Ray started with every core, or on the cluster at
        ``ray_address``. Needs the ``scale`` extra.
    ray_address : str, optional
        A running Ray cluster (``"auto"``, ``"host:6379"``, ``"ray://host:10001"``); an
        unreachable one is an :class:`InvalidParameterError` within about 30 seconds.
    chunk_size : int, default=100_000
        Rows per chunk read, hashed and written; the result does not depend on it.
    n_folds, random_state : int
        Cross-fitting folds, and the seed of the folds and of SGD's order.
    top, threshold : optional
        Flag the ``top`` most suspect items, or those whose given label has probability
        below ``threshold``; by default, as many as cleanlab estimates.
    resume : bool, default=True
        Reuse the finished folds of an interrupted run with the same input and options
        (hashed model only; ``random_state=None`` draws new folds, so nothing matches);
        False starts over.
    progress : bool, optional
        Progress bars on stderr (default: when stderr is a terminal).
    tfidf : {"auto", "memory", "hashing"}
        ``"memory"``: everything as :func:`labelaudit.scan` does whatever the size (all rows
        in memory); ``"hashing"``: the out-of-core path whatever the size.
    hashing_threshold : int, default=200_000
    hashing : HashingOptions, optional
    embed : EmbedOptions, optional
        The embed member's encoder, cache and heads.
    screen : int, default=2000
        The sample size of the screening of the default members (0: no screening).
    keep_columns : bool, default=True
        Write the input's other columns after labelaudit's.
    checkpoint_dir : path, optional
        Where fold checkpoints and temporary files go (default ``<out>.parts``, or a folder
        under the system's temporary folder for a remote ``out``); removed when the scan
        succeeds. A scan small enough for memory checkpoints its folds only when this is
        given (see :func:`labelaudit.scan`).
    overwrite : bool, default=False
        Replace labelaudit's own earlier ``out`` that was changed since it was written.
        Without it, only an unchanged earlier output is replaced; a file labelaudit did
        not write, or an input, never is.

    Returns
    -------
    StreamScanResult

    References
    ----------
    Weinberger, Dasgupta, Langford, Smola & Attenberg (2009), Feature Hashing for Large
    Scale Multitask Learning. Bottou (2010), Large-Scale Machine Learning with Stochastic
    Gradient Descent. Northcutt, Jiang & Chuang (2021), Confident Learning.

    Examples
    --------
    A CSV file read in chunks of 16 rows, its issues written to a Parquet file:

    >>> import tempfile, pathlib
    >>> import pandas as pd
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> topics = [("match goal team", "sport"), ("pasta sauce cook", "food")]
    >>> lines = [f"{words} {i},{label}" for i in range(20) for words, label in topics]
    >>> lines[0] = "match goal team 0,food"          # a planted error
    >>> _ = (folder / "data.csv").write_text("\\n".join(["text,label", *lines]))
    >>> result = scan_stream(folder / "data.csv", out=folder / "issues.parquet",
    ...                      scorers=["tfidf"], chunk_size=16)
    >>> result.n_items, result.model
    (40, 'tfidf')
    >>> int(pd.read_parquet(folder / "issues.parquet")["id"].iloc[0])
    0
    """
    return stream_chunks(**locals(), in_memory=scan)
