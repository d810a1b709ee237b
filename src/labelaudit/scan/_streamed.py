"""``scan_stream``: a TF-IDF scan of a dataset too big for memory, chunk by chunk."""

from __future__ import annotations

import resource
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np

from labelaudit._errors import InvalidParameterError
from labelaudit._validation import check_choice, check_int
from labelaudit.engine import (
    Checkpoint,
    Columns,
    EmbedOptions,
    HashingOptions,
    Source,
    check_chunk_size,
    check_columns,
    check_output,
    is_folder_output,
    resolve_source,
)
from labelaudit.registry import STREAMED_SCORERS
from labelaudit.scan._stream_output import MEMBER, RANK_BY
from labelaudit.scan._stream_passes import hashed_scan, small_scan
from labelaudit.scan._summary import ScanFacts, format_scan_summary
from labelaudit.scan._text import check_flagging
from labelaudit.scan._text_result import chance_note

__all__ = ["HASHING_THRESHOLD", "StreamScanResult", "scan_stream"]

HASHING_THRESHOLD = 200_000  # above this many items, tfidf="auto" uses the hashed model
HASHED = "tfidf-hash"


@dataclass(frozen=True)
class StreamScanResult:
    """What :func:`scan_stream` did; the ranked items are in the file ``out``.

    Attributes
    ----------
    out : Path or str
        The output file (or folder of Parquet parts; a remote URI stays a string): one row
        per item, most suspect first, with the columns of
        :meth:`labelaudit.scan.ScanResult.to_frame`.
    n_items, n_classes, n_flagged : int
    n_issues_estimate : int
        cleanlab's estimate of the number of label errors.
    flag_rule : str
    accuracy : float
        Out-of-sample accuracy against the given labels.
    majority_rate : float
        The accuracy of always predicting the most common given label.
    model : str
        ``"tfidf"`` (:class:`~labelaudit.models.TfidfScorer` in memory, as
        :func:`labelaudit.scan`) or ``"tfidf-hash"`` (hashed features, out-of-core SGD).
    weights : dict of str to float
        Each member's ensemble weight (``tfidf``, ``embed``).
    screened : dict of str to float
        Default members left out after screening, with their weight on the sample.
    engine : str
        ``"local"`` or ``"ray"``.
    n_folds : int
    resumed_folds : int
        Folds loaded from the checkpoint of an interrupted run instead of being fitted.
    seconds : float
    peak_rss_mb : float
        Peak resident memory of this process so far (``getrusage``), in MiB.
    """

    out: Path | str
    n_items: int
    n_classes: int
    n_flagged: int
    n_issues_estimate: int
    flag_rule: str
    accuracy: float
    majority_rate: float
    model: str
    weights: dict[str, float]
    screened: dict[str, float]
    engine: str
    n_folds: int
    resumed_folds: int
    seconds: float
    peak_rss_mb: float

    def summary(self) -> str:
        """A few lines for a person, in the format every scan prints (see
        :func:`labelaudit.scan.format_scan_summary`)."""
        resumed = f", {self.resumed_folds} resumed" if self.resumed_folds else ""
        facts = ScanFacts(
            n_items=self.n_items, n_classes=self.n_classes,
            n_issues_estimate=self.n_issues_estimate, n_flagged=self.n_flagged,
            flag_rule=self.flag_rule, rank_by=RANK_BY, accuracy=self.accuracy,
            majority_rate=self.majority_rate,
            how=(self.model if set(self.weights) <= {"tfidf"}
                 else ", ".join(self.weights)),
            mode=f"{self.n_folds}-fold cross-fit{resumed}", engine=self.engine,
            weights={k: (v, None, None) for k, v in self.weights.items()},
            screened=self.screened, written=str(self.out), seconds=self.seconds,
            peak_rss_mb=self.peak_rss_mb)
        weak = chance_note(self.accuracy, self.majority_rate) if self.n_items else ""
        return format_scan_summary(facts, weak)


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _check_members(scorers: Any) -> list[str] | None:
    if scorers is None:
        return None
    names = [scorers] if isinstance(scorers, str) else list(scorers)
    if not names:
        raise InvalidParameterError("give at least one scorer")
    other = [n for n in names if n not in STREAMED_SCORERS]
    if other:
        raise InvalidParameterError(
            f"a streamed scan runs the tfidf and embed members; got {', '.join(map(str, other))}"
            " (fine-tuning needs every item in memory: labelaudit.scan(engine='ray') fits its "
            "folds as Ray tasks)")
    if len(set(names)) < len(names):
        raise InvalidParameterError(f"the ensemble names a member twice: {names}")
    return names


def _check_options(*, engine: str, ray_address: str | None, tfidf: str, n_folds: int,
                   top: int | None, threshold: float | None, random_state: int | None,
                   hashing_threshold: int) -> None:
    from labelaudit.engine import check_engine

    check_engine(engine, ray_address)
    check_choice(tfidf, "tfidf", ("auto", "memory", "hashing"))
    check_int(n_folds, "n_folds", minimum=2)
    check_int(hashing_threshold, "hashing_threshold", minimum=0)
    check_flagging(top, threshold)
    if random_state is not None:
        check_int(random_state, "random_state", minimum=0)


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

    Up to ``hashing_threshold`` items (``tfidf="auto"``), this is exactly
    ``labelaudit.scan(data, scorers=scorers)`` written in chunks (with the Ray engine, its
    folds are Ray tasks). Above it, the texts are hashed chunk by chunk
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
        Replace an existing local ``out`` file that labelaudit did not write. Without it,
        only labelaudit's own earlier output is replaced; an input never is.

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
    from labelaudit.models._progress import default_progress

    started = time.perf_counter()
    members = _check_members(scorers)
    _check_options(engine=engine, ray_address=ray_address, tfidf=tfidf, n_folds=n_folds,
                   top=top, threshold=threshold, random_state=random_state,
                   hashing_threshold=hashing_threshold)
    check_int(screen, "screen", minimum=0)
    chunk_size = check_chunk_size(chunk_size)
    options = (hashing if hashing is not None else HashingOptions()).check()
    embedding = (embed if embed is not None else EmbedOptions()).check()
    src = resolve_source(source)
    needed = [c for c in (text, text_pair, label, id) if c is not None]
    names = check_columns(src, needed)
    columns = Columns(text, label, text_pair,
                      id if id is not None else ("id" if "id" in names else None))
    check_output(out, list(src.paths), overwrite=overwrite)
    target: Path | str = str(out) if "://" in str(out) or is_folder_output(out) else Path(out)
    seed = (int(np.random.default_rng().integers(2**31)) if random_state is None
            else int(random_state))
    shown = default_progress() if progress is None else progress
    plan = _Plan(columns=columns, members=members, embed=embedding, screen=screen,
                 n_folds=n_folds, seed=seed, top=top, threshold=threshold,
                 keep_columns=keep_columns, progress=shown, chunk_size=chunk_size,
                 checkpoint_dir=checkpoint_dir, resume=resume)
    with _runner(engine, src, chunk_size=chunk_size, address=ray_address) as runner:
        limit = {"auto": hashing_threshold, "memory": np.inf, "hashing": -1}[tfidf]
        size = runner.at_most(columns, limit) if tfidf != "memory" else 0
        if size is not None:
            (n_items, n_classes, scores), screened = small_scan(runner, plan, out=target)
            model, resumed = MEMBER, 0
        else:
            parts = _checkpoint_dir(out, checkpoint_dir)
            manifest = {"input": src.fingerprint(), "columns": list(columns.needed),
                        "id": columns.id, "text_pair": text_pair, "n_folds": n_folds,
                        "random_state": seed, "hashing": vars(options),
                        "members": members, "screen": screen, "embed": embedding.key()}
            checkpoint = Checkpoint(parts, manifest, resume=resume)
            try:
                (n_items, n_classes, scores), screened, resumed = hashed_scan(
                    runner, plan, options, checkpoint, out=target)
            except BaseException:
                checkpoint.abandon()  # keeps finished folds only
                raise
            checkpoint.remove()
            model = HASHED
    return StreamScanResult(
        out=target, n_items=n_items, n_classes=n_classes,
        n_flagged=int(scores.flagged.sum()), n_issues_estimate=scores.n_issues_estimate,
        flag_rule=scores.flag_rule, accuracy=scores.accuracy,
        majority_rate=scores.majority_rate, model=model, weights=scores.weights,
        screened=screened, engine=engine, n_folds=n_folds, resumed_folds=resumed,
        seconds=time.perf_counter() - started, peak_rss_mb=_peak_rss_mb())


@dataclass(frozen=True)
class _Plan:
    """The options every step of a streamed scan reads."""

    columns: Columns
    members: list[str] | None  # None: the default members, screened
    embed: EmbedOptions
    screen: int
    n_folds: int
    seed: int
    top: int | None
    threshold: float | None
    keep_columns: bool
    progress: bool
    chunk_size: int
    checkpoint_dir: str | Path | None = None  # asked for: fold checkpoints in memory too
    resume: bool = True


def _checkpoint_dir(out: str | Path, given: str | Path | None) -> Path:
    """``given``, else ``<out>.parts`` beside a local output, else a folder named after
    the remote output under the system's temporary folder."""
    import hashlib
    import tempfile

    if given is not None:
        return Path(given)
    text = str(out).rstrip("/")
    if "://" in text:
        key = hashlib.sha256(text.encode()).hexdigest()[:16]
        return Path(tempfile.gettempdir()) / f"labelaudit-{key}.parts"
    return Path(f"{text}.parts")


def _runner(engine: str, source: Source, *, chunk_size: int, address: str | None) -> Any:
    if engine == "ray":
        from labelaudit.engine import RayRunner

        return RayRunner(source, chunk_size=chunk_size, address=address)
    from labelaudit.engine import LocalRunner

    return LocalRunner(source, chunk_size=chunk_size)
