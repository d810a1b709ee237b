"""``scan_stream``: a TF-IDF scan of a dataset too big for memory, chunk by chunk."""

from __future__ import annotations

import resource
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd

from labelaudit._errors import InvalidInputError, InvalidParameterError
from labelaudit._validation import check_choice, check_int
from labelaudit.audit._text import check_flagging
from labelaudit.audit._text_result import chance_note
from labelaudit.scale._chunks import Collector, Columns
from labelaudit.scale._hashing import HashingOptions
from labelaudit.scale._output import (
    MEMBER,
    Scores,
    extra_columns,
    output_frame,
    output_names,
    score_probs,
)
from labelaudit.scale._resume import Checkpoint
from labelaudit.scale._sink import RankSorter, check_output, is_folder_output, writer_for
from labelaudit.scale._stream import Source, check_chunk_size, check_columns, resolve_source

__all__ = ["HASHING_THRESHOLD", "StreamScanResult", "scan_stream"]

HASHING_THRESHOLD = 200_000  # above this many items, scorer="auto" uses the hashed model
HASHED = "tfidf-hash"


@dataclass(frozen=True)
class StreamScanResult:
    """What :func:`scan_stream` did; the ranked items are in the file ``out``.

    Attributes
    ----------
    out : Path or str
        The output file (or folder of Parquet parts; a remote URI stays a string): one row
        per item, most suspect first, with the columns of
        :meth:`labelaudit.audit.ScanResult.to_frame`.
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
    engine: str
    n_folds: int
    resumed_folds: int
    seconds: float
    peak_rss_mb: float

    def summary(self) -> str:
        """A few lines for a person."""
        n = max(self.n_items, 1)
        resumed = f", {self.resumed_folds} resumed" if self.resumed_folds else ""
        return (
            f"items: {self.n_items}  classes: {self.n_classes}  model: {self.model} "
            f"({self.n_folds}-fold cross-fit{resumed})  engine: {self.engine}\n"
            f"estimated label errors (cleanlab): {self.n_issues_estimate} "
            f"({self.n_issues_estimate / n:.1%})\n"
            f"flagged: {self.n_flagged} ({self.n_flagged / n:.1%}; {self.flag_rule})"
            f"{chance_note(self.accuracy, self.majority_rate) if self.n_items else ''}\n"
            f"out-of-sample accuracy: {self.accuracy:.3f} (most common class: "
            f"{self.majority_rate:.3f})\n"
            f"wrote {self.out}\n"
            f"time: {self.seconds:.1f}s  peak memory: {self.peak_rss_mb:.0f} MiB")


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _bar(total: int | None, desc: str, *, unit: str, enabled: bool) -> Any:
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, unit=unit, disable=not enabled, leave=False)


def _check_options(*, engine: str, ray_address: str | None, scorer: str, n_folds: int,
                   top: int | None, threshold: float | None, random_state: int | None,
                   hashing_threshold: int) -> None:
    check_choice(engine, "engine", ("local", "ray"))
    check_choice(scorer, "scorer", ("auto", "tfidf", "hashing"))
    if ray_address is not None and engine != "ray":
        raise InvalidParameterError(
            "ray_address connects to a Ray cluster: give engine='ray' (--engine ray) too")
    check_int(n_folds, "n_folds", minimum=2)
    check_int(hashing_threshold, "hashing_threshold", minimum=0)
    check_flagging(top, threshold)
    if random_state is not None:
        check_int(random_state, "random_state", minimum=0)


def scan_stream(
    source: str | Path | list[str | Path], *, text: str = "text", label: str = "label",
    text_pair: str | None = None, id: str | None = None,  # noqa: A002 - mirrors the CLI flag
    out: str | Path, engine: Literal["local", "ray"] = "local",
    ray_address: str | None = None, chunk_size: int = 100_000, n_folds: int = 5,
    random_state: int | None = 0, top: int | None = None, threshold: float | None = None,
    resume: bool = True, progress: bool | None = None,
    scorer: Literal["auto", "tfidf", "hashing"] = "auto",
    hashing_threshold: int = HASHING_THRESHOLD, hashing: HashingOptions | None = None,
    keep_columns: bool = True, checkpoint_dir: str | Path | None = None,
) -> StreamScanResult:
    """Rank every item of a large text dataset by how likely its label is wrong, reading
    and writing it in chunks.

    Up to ``hashing_threshold`` items (``scorer="auto"``), this is exactly
    ``labelaudit.scan(data, scorers=["tfidf"])`` written in chunks. Above it, the texts are
    hashed chunk by chunk (:class:`HashingOptions`: no vocabulary, fixed memory), the
    hashed rows wait on disk (or in Ray's object store), and each of ``n_folds`` models is
    trained out of core by SGD on the rows of the other folds (folds from a seeded hash of
    the row number), so no item is scored by a model that saw it, nor by an idf that
    counted it. Only labels, fold ids and the out-of-sample probabilities, shape
    (n_samples, n_classes), are held for every item; the output is written most suspect
    first by an external sort. Flags, scores and the estimated error count are computed
    as :func:`labelaudit.scan` computes them.

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
    scorer : {"auto", "tfidf", "hashing"}
        ``"tfidf"``: the in-memory model of :func:`labelaudit.scan` whatever the size (all
        rows in memory); ``"hashing"``: the out-of-core model whatever the size.
    hashing_threshold : int, default=200_000
    hashing : HashingOptions, optional
    keep_columns : bool, default=True
        Write the input's other columns after labelaudit's.
    checkpoint_dir : path, optional
        Where fold checkpoints and temporary files go (default ``<out>.parts``, or a folder
        under the system's temporary folder for a remote ``out``); removed when the scan
        succeeds.

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
    >>> import tempfile, pathlib
    >>> rng = np.random.default_rng(0)
    >>> words = {"sport": "match goal team", "food": "pasta sauce cook"}
    >>> rows = [(f"{words[c]} {rng.integers(100)}", c) for c in ["sport", "food"] * 20]
    >>> frame = pd.DataFrame(rows, columns=["text", "label"])
    >>> frame.loc[0, "label"] = "food"          # a planted error
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> frame.to_parquet(folder / "data.parquet")
    >>> result = scan_stream(folder / "data.parquet", out=folder / "issues.parquet",
    ...                      chunk_size=16)
    >>> result.n_items, result.model
    (40, 'tfidf')
    >>> int(pd.read_parquet(folder / "issues.parquet")["id"].iloc[0])
    0
    """
    from labelaudit.models._progress import default_progress

    started = time.perf_counter()
    _check_options(engine=engine, ray_address=ray_address, scorer=scorer, n_folds=n_folds,
                   top=top, threshold=threshold, random_state=random_state,
                   hashing_threshold=hashing_threshold)
    chunk_size = check_chunk_size(chunk_size)
    options = (hashing if hashing is not None else HashingOptions()).check()
    src = resolve_source(source)
    needed = [c for c in (text, text_pair, label, id) if c is not None]
    names = check_columns(src, needed)
    columns = Columns(text, label, text_pair,
                      id if id is not None else ("id" if "id" in names else None))
    check_output(out, [p for p in src.paths if "://" not in p])
    target: Path | str = str(out) if is_folder_output(out) else Path(out)
    seed = (int(np.random.default_rng().integers(2**31)) if random_state is None
            else int(random_state))
    shown = default_progress() if progress is None else progress
    with _runner(engine, src, chunk_size=chunk_size, address=ray_address) as runner:
        limit = {"auto": hashing_threshold, "tfidf": np.inf, "hashing": -1}[scorer]
        size = runner.at_most(columns, limit) if scorer != "tfidf" else 0
        if size is not None:
            stats = _small(runner, columns, out=target, n_folds=n_folds, random_state=seed,
                           top=top, threshold=threshold, keep_columns=keep_columns,
                           progress=shown, chunk_size=chunk_size)
            model, resumed = MEMBER, 0
        else:
            parts = _checkpoint_dir(out, checkpoint_dir)
            manifest = {"input": src.fingerprint(), "columns": list(columns.needed),
                        "id": columns.id, "text_pair": text_pair, "n_folds": n_folds,
                        "random_state": seed, "hashing": vars(options)}
            checkpoint = Checkpoint(parts, manifest, resume=resume)
            try:
                stats, resumed = _hashed(runner, columns, options, checkpoint, out=target,
                                         n_folds=n_folds, seed=seed, top=top,
                                         threshold=threshold, keep_columns=keep_columns,
                                         progress=shown, chunk_size=chunk_size)
            except BaseException:
                checkpoint.abandon()  # keeps finished folds only
                raise
            checkpoint.remove()
            model = HASHED
    n_items, n_classes, scores = stats
    return StreamScanResult(
        out=target, n_items=n_items, n_classes=n_classes,
        n_flagged=int(scores.flagged.sum()), n_issues_estimate=scores.n_issues_estimate,
        flag_rule=scores.flag_rule, accuracy=scores.accuracy,
        majority_rate=scores.majority_rate, model=model, engine=engine,
        n_folds=n_folds, resumed_folds=resumed, seconds=time.perf_counter() - started,
        peak_rss_mb=_peak_rss_mb())


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
        from labelaudit.scale._ray import RayRunner

        return RayRunner(source, chunk_size=chunk_size, address=address)
    from labelaudit.scale._local import LocalRunner

    return LocalRunner(source, chunk_size=chunk_size)


def _small(runner: Any, columns: Columns, *, out: Path | str, n_folds: int, random_state: int,
           top: int | None, threshold: float | None, keep_columns: bool, progress: bool,
           chunk_size: int) -> tuple[int, int, Scores]:
    """All rows in memory: ``labelaudit.scan(scorers=["tfidf"])`` (its folds as Ray tasks
    on the Ray engine), written in chunks."""
    frames = list(runner.frames())
    frame = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    del frames
    if runner.name == "ray":
        table, scores, n_classes = runner.small_scan(
            frame, columns, n_folds=n_folds, random_state=random_state, top=top,
            threshold=threshold, keep_columns=keep_columns)
    else:
        from labelaudit.audit import scan

        result = scan(frame, text=columns.text, label=columns.label,
                      text_pair=columns.text_pair, id=columns.id, scorers=[MEMBER],
                      n_folds=n_folds, random_state=random_state, top=top,
                      threshold=threshold, keep_columns=keep_columns, progress=progress)
        table = result.to_frame()
        n_classes = len(result.classes)
        rank = np.empty(len(result.labels), dtype=np.int64)
        rank[result.order] = np.arange(1, len(rank) + 1)
        scores = Scores(result.pred_probs, result.member_probs[MEMBER],
                        result.temperatures[MEMBER], result.scores, rank, result.flagged,
                        result.flag_rule, result.n_issues_estimate, result.accuracy,
                        result.majority_rate)
    del frame
    with writer_for(out) as writer:
        if len(table) == 0:
            writer.write(table)
        for start in range(0, len(table), chunk_size):
            writer.write(table.iloc[start:start + chunk_size])
    return len(table), n_classes, scores


def _hashed(runner: Any, columns: Columns, options: HashingOptions, checkpoint: Checkpoint,
            *, out: Path | str, n_folds: int, seed: int, top: int | None, threshold: float | None,
            keep_columns: bool, progress: bool, chunk_size: int,
            ) -> tuple[tuple[int, int, Scores], int]:
    """The out-of-core path: hash, fit folds (resuming finished ones), score, write."""
    from labelaudit.audit._text_result import warn_if_chance_level

    store = runner.store(checkpoint.scratch("spill"), n_buckets=options.n_buckets)
    collector = Collector(columns, options, n_folds, seed, put=store.put)
    with _bar(None, "hashing", unit=" rows", enabled=progress) as bar:
        for chunk in runner.hashed(columns, options):
            collector.add(chunk)
            bar.update(chunk.n_rows)
    store.close()
    labels, classes, folds = collector.finish()
    assert collector.counts is not None  # finish() refuses an empty input
    n_classes = len(classes)
    probs = np.zeros((len(labels), n_classes), dtype=np.float32)
    done = checkpoint.finished()
    for fold in done:
        saved = checkpoint.load(fold)
        probs[saved.rows] = saved.probs
    todo = [f for f in range(n_folds) if f not in done]
    with _bar(len(todo), f"fitting {len(todo)} folds ({HASHED})", unit=" folds",
              enabled=progress) as bar:
        for prediction in runner.fit_folds(todo, store, labels, folds, collector.counts,
                                           options, n_classes=n_classes, random_state=seed):
            checkpoint.save(prediction)
            probs[prediction.rows] = prediction.probs
            bar.update(1)
    store.remove()
    scores = score_probs(labels, probs.astype(np.float64), top=top, threshold=threshold)
    del probs
    warn_if_chance_level(labels, scores.pred_probs)
    sorter = RankSorter(checkpoint.scratch("sort"), part_size=chunk_size)
    extras: dict[str, str] | None = None
    offset = 0
    with _bar(len(labels), "writing", unit=" rows", enabled=progress) as bar:
        for frame in runner.frames():
            if extras is None:
                kept = extra_columns(list(map(str, frame.columns)), columns) \
                    if keep_columns else []
                extras = output_names(kept)
            rows = np.arange(offset, offset + len(frame))
            if offset + len(frame) > len(labels):
                raise _changed(len(labels), "more")
            sorter.add(output_frame(frame, rows, columns=columns, labels=labels,
                                    classes=classes, scores=scores, extras=extras))
            offset += len(frame)
            bar.update(len(frame))
    if offset != len(labels):
        raise _changed(len(labels), str(offset))
    with writer_for(out, schema=sorter.schema()) as writer:
        for table in sorter.tables():
            writer.write_table(table)
    sorter.remove()
    return (len(labels), n_classes, scores), len(done)


def _changed(n_hashed: int, n_read: str) -> InvalidInputError:
    return InvalidInputError(
        f"the input changed during the scan: {n_hashed} rows when hashed, {n_read} when read "
        "again to write the output; rerun it on a copy that does not change")
