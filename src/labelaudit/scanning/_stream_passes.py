"""The passes of :func:`labelaudit.scanning.scan_stream` over the data: the in-memory scan of
a small input, and the out-of-core path (hash, screen, fit each member's folds, write)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from labelaudit._errors import InvalidInputError
from labelaudit.engine import (
    Checkpoint,
    Collector,
    EmbedOptions,
    FoldPrediction,
    HashingOptions,
    RankSorter,
    writer_for,
)
from labelaudit.scanning._stream_output import (
    Scores,
    extra_columns,
    output_frame,
    output_names,
    score_probs,
)

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from labelaudit.scanning._streamed import _Plan

__all__ = ["hashed_scan", "small_scan"]

Stats = tuple[int, int, Scores]


def _bar(total: int | None, desc: str, *, unit: str, enabled: bool) -> Any:
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, unit=unit, disable=not enabled, leave=False)


def _scorers(names: list[str], options: EmbedOptions) -> list[Any]:
    """The in-memory scan's members for ``names``: ``"tfidf"`` as it is, ``"embed"`` as
    the :class:`~labelaudit.models.EmbedScorer` of ``options``."""
    from labelaudit.models import EmbedScorer

    return [name if name != "embed" else EmbedScorer(
        model=options.model, pair_mode=options.pair_mode, C=options.C,
        batch_size=options.batch_size, max_length=options.max_length,
        cache_dir=options.cache_dir) for name in names]


def _screened(scorers: list[Any], data: Any, plan: _Plan, *, size: int | None,
              ) -> tuple[list[str], dict[str, float]]:
    """:func:`labelaudit.scanning._screen.screen_members` on ``data``, the kept members
    by name."""
    from labelaudit.scanning._screen import screen_members

    kept, dropped = screen_members(data, scorers, size=size, n_folds=plan.n_folds,
                                   random_state=plan.seed, progress=plan.progress)
    return [m if isinstance(m, str) else m.name for m in kept], dropped


def small_scan(runner: Any, plan: _Plan, *, out: Path | str) -> tuple[Stats, dict[str, float]]:
    """All rows in memory: :func:`labelaudit.scan` (its folds as Ray tasks on the Ray
    engine), written in chunks."""
    import pandas as pd

    from labelaudit.scanning._text_result import ScanResult

    frames = list(runner.frames())
    frame = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    del frames
    columns, embed = plan.columns, plan.embed
    members: list[str] | None = plan.members
    screened: dict[str, float] = {}
    if runner.name == "ray" and len(frame):
        members, screened = _encode_on_ray(runner, plan, frame)
    default = members is None
    result = plan.in_memory(
        frame, text=columns.text, label=columns.label, text_pair=columns.text_pair,
        id=columns.id, n_folds=plan.n_folds, random_state=plan.seed, top=plan.top,
        threshold=plan.threshold, keep_columns=plan.keep_columns, progress=plan.progress,
        scorers=None if default else _scorers(members or [], embed),
        model=embed.model if default else None,
        pair_mode=embed.pair_mode if default and columns.text_pair else None,
        # False (no cache) is passed on to EmbedScorer, which takes it
        cache_dir=cast(Any, embed.cache_dir) if default else None, screen=plan.screen,
        engine=runner.name, checkpoint_dir=plan.checkpoint_dir, resume=plan.resume)
    assert isinstance(result, ScanResult)  # noqa: S101 - the streamed scan is single-label
    del frame
    screened = {**screened, **result.screened}
    table = result.to_frame()
    rank = np.empty(len(result.labels), dtype=np.int64)
    rank[result.order] = np.arange(1, len(rank) + 1)
    scores = Scores(result.pred_probs, dict(result.member_probs), dict(result.weights),
                    dict(result.temperatures), result.scores, rank, result.flagged,
                    result.flag_rule, result.n_issues_estimate, result.accuracy,
                    result.majority_rate)
    with writer_for(out) as writer:
        if len(table) == 0:
            writer.write(table)
        for start in range(0, len(table), plan.chunk_size):
            writer.write(table.iloc[start:start + plan.chunk_size])
    return (len(table), len(result.classes), scores), screened


def _encode_on_ray(runner: Any, plan: _Plan, frame: pd.DataFrame,
                   ) -> tuple[list[str] | None, dict[str, float]]:
    """Before the in-memory scan on the Ray engine: screen the default members as
    :func:`labelaudit.scan` would, and when the embed member runs, encode every row on
    the pool of encoder actors into the embedding cache, so that the scan finds each
    embedding cached instead of encoding in this process. Returns the members to run
    (None: the scan's defaults, unscreened) and the ones screened out."""
    from labelaudit.io import prepare_text_dataset
    from labelaudit.registry import SCORERS

    columns = plan.columns
    members: list[str] | None = plan.members
    screened: dict[str, float] = {}
    # checked first, so that bad rows fail before any encoding
    data = prepare_text_dataset(frame, text=columns.text, label=columns.label,
                                text_pair=columns.text_pair, id=columns.id)
    if members is None and plan.screen and len(frame) > plan.screen:
        members, screened = _screened(_scorers(list(SCORERS.default), plan.embed), data,
                                      plan, size=plan.screen)
    running = members if members is not None else list(SCORERS.default)
    if "embed" in running and plan.embed.cache_dir is not False:
        with _bar(len(frame), "embedding (Ray actors)", unit=" rows",
                  enabled=plan.progress) as bar:
            runner.embedded(columns, plan.embed, n_rows=len(frame), folder=None,
                            progress=bar.update, keep=False)
    return members, screened


def hashed_scan(runner: Any, plan: _Plan, options: HashingOptions, checkpoint: Checkpoint, *,
                out: Path | str) -> tuple[Stats, dict[str, float], int]:
    """The out-of-core path: hash (checking every row), screen the default members on a
    sample, fit each member's folds (resuming finished ones), score, write. Returns the
    stats, the members screened out and the number of folds resumed."""
    from labelaudit.registry import STREAMED_SCORERS
    from labelaudit.scanning._text_result import warn_if_chance_level

    wanted = plan.members if plan.members is not None else list(STREAMED_SCORERS)
    store = (runner.store(checkpoint.scratch("spill"), n_buckets=options.n_buckets)
             if "tfidf" in wanted else None)
    collector = Collector(plan.columns, options, plan.n_folds, plan.seed,
                          put=store.put if store is not None else _discard)
    with _bar(None, "hashing", unit=" rows", enabled=plan.progress) as bar:
        for chunk in runner.hashed(plan.columns, options):
            collector.add(chunk)
            bar.update(chunk.n_rows)
    if store is not None:
        store.close()
    labels, classes, folds = collector.finish()
    assert collector.counts is not None  # finish() refuses an empty input
    counts = collector.counts
    n_classes = len(classes)
    screened: dict[str, float] = {}
    members = plan.members
    if members is None:
        members, screened = _screen(runner, plan, labels, classes, wanted)
    member_probs: dict[str, np.ndarray] = {}
    resumed = 0
    for name in members:
        if name == "tfidf":
            def fit(todo: list[int]) -> Iterable[FoldPrediction]:
                return runner.fit_folds(todo, store, labels, folds, counts, options,
                                        n_classes=n_classes, random_state=plan.seed)
            what = f"{name} (hashed)"
        else:
            def fit(todo: list[int]) -> Iterable[FoldPrediction]:
                chunks = _embeddings(runner, plan, len(labels), checkpoint)
                return runner.fit_heads(todo, chunks, labels, folds, plan.embed,
                                        n_classes=n_classes, random_state=plan.seed)
            what = name
        member_probs[name], done = _member(name, what, fit, checkpoint, plan,
                                           n_items=len(labels), n_classes=n_classes)
        resumed += done
    if store is not None:
        store.remove()
    scores = score_probs(labels, {k: v.astype(np.float64) for k, v in member_probs.items()},
                         top=plan.top, threshold=plan.threshold)
    del member_probs
    warn_if_chance_level(labels, scores.pred_probs)
    _write(runner, plan, checkpoint, labels, classes, scores, out=out)
    return (len(labels), n_classes, scores), screened, resumed


def _discard(bucket: int, rows: np.ndarray, matrix: Any) -> None:
    """The hashed rows are not kept when tfidf is not a member."""


def _member(name: str, what: str, fit: Callable[[list[int]], Iterable[FoldPrediction]],
            checkpoint: Checkpoint, plan: _Plan, *, n_items: int, n_classes: int,
            ) -> tuple[np.ndarray, int]:
    """One member's out-of-sample probabilities: its finished folds from the checkpoint,
    the others fitted (and checkpointed as each finishes)."""
    probs = np.zeros((n_items, n_classes), dtype=np.float32)
    done = checkpoint.finished(name)
    for fold in done:
        saved = checkpoint.load(fold, name)
        probs[saved.rows] = saved.probs
    todo = [f for f in range(plan.n_folds) if f not in done]
    if todo:
        with _bar(len(todo), f"fitting {len(todo)} folds ({what})", unit=" folds",
                  enabled=plan.progress) as bar:
            for prediction in fit(todo):
                checkpoint.save(prediction, name)
                probs[prediction.rows] = prediction.probs
                bar.update(1)
    return probs, len(done)


def _embeddings(runner: Any, plan: _Plan, n_items: int, checkpoint: Checkpoint) -> Any:
    """Every row's embedding, in input order (through the embedding cache)."""
    with _bar(n_items, "embedding", unit=" rows", enabled=plan.progress) as bar:
        return runner.embedded(plan.columns, plan.embed, n_rows=n_items,
                               folder=checkpoint.scratch("embed"), progress=bar.update)


def _screen(runner: Any, plan: _Plan, labels: np.ndarray, classes: np.ndarray,
            default: list[str]) -> tuple[list[str], dict[str, float]]:
    """The default members kept after screening them on a stratified sample of the rows
    (read again, the sample's texts only)."""
    from labelaudit.io import TextDataset
    from labelaudit.scanning._screen import screen_sample

    if not plan.screen or len(labels) <= plan.screen or len(default) < 2:
        return default, {}
    sample = screen_sample(labels, size=plan.screen, random_state=plan.seed)
    columns = plan.columns
    texts: list[str] = []
    pairs: list[str] = []
    offset = 0
    for frame in runner.frames([c for c in (columns.text, columns.text_pair) if c]):
        lo, hi = np.searchsorted(sample, [offset, offset + len(frame)])
        local = sample[lo:hi] - offset
        texts += frame[columns.text].iloc[local].astype(str).tolist()
        if columns.text_pair:
            pairs += frame[columns.text_pair].iloc[local].astype(str).tolist()
        offset += len(frame)
    part = TextDataset(ids=sample, texts=texts, text_pairs=pairs if columns.text_pair else None,
                       labels=labels[sample], classes=classes)
    return _screened(_scorers(default, plan.embed), part, plan, size=None)


def _write(runner: Any, plan: _Plan, checkpoint: Checkpoint, labels: np.ndarray,
           classes: np.ndarray, scores: Scores, *, out: Path | str) -> None:
    """Read the input once more and write every row with its scores, most suspect first
    (an external sort by rank)."""
    columns = plan.columns
    sorter = RankSorter(checkpoint.scratch("sort"), part_size=plan.chunk_size)
    extras: dict[str, str] | None = None
    offset = 0
    with _bar(len(labels), "writing", unit=" rows", enabled=plan.progress) as bar:
        for frame in runner.frames():
            if extras is None:
                kept = extra_columns(list(map(str, frame.columns)), columns) \
                    if plan.keep_columns else []
                extras = output_names(kept, first=scores.first)
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


def _changed(n_hashed: int, n_read: str) -> InvalidInputError:
    return InvalidInputError(
        f"the input changed during the scan: {n_hashed} rows when hashed, {n_read} when read "
        "again to write the output; rerun it on a copy that does not change")
