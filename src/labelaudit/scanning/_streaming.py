"""The streamed scan (``scan(data, out=...)``), chunk by chunk in the columns of
:meth:`ScanResult.to_frame`: up to ``hashing_threshold`` items by the in-memory pipeline,
above by the out-of-core path (:func:`hashed_scan`)."""

from __future__ import annotations

import dataclasses
import hashlib
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from labelaudit._errors import InvalidInputError, InvalidParameterError
from labelaudit.detect import Probs, ensemble_pred_probs
from labelaudit.engine import (
    Checkpoint,
    Collector,
    Columns,
    EmbedOptions,
    FoldPrediction,
    HashingOptions,
    LocalRunner,
    RankSorter,
    RayRunner,
    Source,
    check_chunk_size,
    check_columns,
    check_output,
    first_rows_hold_label_sets,
    is_folder_output,
    resolve_source,
    writer_for,
)
from labelaudit.io import TextDataset, prepare_text_dataset
from labelaudit.models import DEFAULT_SCORERS, EmbedScorer, default_progress, progress_bar
from labelaudit.scanning._options import (
    DEFAULT_METHOD,
    STREAMED_SCORERS,
    UNANNOTATED_METHODS,
    ScanOptions,
)
from labelaudit.scanning._pipeline import (
    flag_items,
    method_scores,
    scan_frame,
    screen_members,
    screen_sample,
)
from labelaudit.scanning._results import (
    StreamScanResult,
    _accuracy,
    _majority_rate,
    _peak_rss_mb,
    input_names,
    item_columns,
    ranks,
    score_column,
    warn_if_chance_level,
)

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

HASHING_THRESHOLD = 200_000  # above this many items, tfidf="auto" uses the hashed model
HASHED = "tfidf-hash"
MEMBER = "tfidf"  # the member name behind ``score_loss_<member>``
Stats = tuple[int, int, "Scores"]


@dataclass(frozen=True)
class _Plan:
    """What every step of a streamed scan reads: the checked options and what they resolve
    to (``members`` None: the default ones)."""

    options: ScanOptions
    columns: Columns
    members: list[str] | None
    embed: EmbedOptions
    seed: int
    n_folds: int
    progress: bool


def stream_scan(source: Any, options: ScanOptions) -> StreamScanResult:
    """The streamed scan of the files ``source`` on checked ``options`` (``options.out``
    set); see :func:`labelaudit.scan`."""
    o = options
    started = time.perf_counter()
    chunk_size = check_chunk_size(o.chunk_size)
    hashing = (o.hashing if o.hashing is not None else HashingOptions()).check()
    embed = (o.embed if o.embed is not None else EmbedOptions(
        model=o.first_model, pair_mode=o.pair_mode or "features",
        cache_dir=o.cache_dir)).check()
    src = resolve_source(source)
    names = check_columns(src, [c for c in (o.text, o.text_pair, o.label, o.id) if c is not None])
    columns = Columns(o.text, o.label, o.text_pair,
                      o.id if o.id is not None else ("id" if "id" in names else None))
    if first_rows_hold_label_sets(source, o.label):
        raise InvalidParameterError(
            f"out= streams the scan in chunks, one label per item, and column {o.label!r} "
            "holds label sets (multi-label), which scan in memory: drop out= and engine= "
            "(write the result with result.write(path))", param="out")
    assert o.out is not None  # noqa: S101 - a streamed scan has out
    check_output(o.out, list(src.paths), overwrite=o.overwrite)
    out = o.out
    target: Path | str = str(out) if "://" in str(out) or is_folder_output(out) else Path(out)
    seed = (int(np.random.default_rng().integers(2**31)) if o.random_state is None
            else int(o.random_state))
    members = None if o.scorers is None else (
        [o.scorers] if isinstance(o.scorers, str) else list(o.scorers))
    plan = _Plan(options=dataclasses.replace(o, chunk_size=chunk_size), columns=columns,
                 members=members, embed=embed, seed=seed, n_folds=o.n_folds or 5,
                 progress=default_progress() if o.progress is None else o.progress)
    with _runner(o.engine, src, chunk_size=chunk_size, address=o.ray_address,
                 text=[columns.id] if columns.id else []) as runner:
        threshold = HASHING_THRESHOLD if o.hashing_threshold is None else o.hashing_threshold
        limit = {"auto": threshold, "memory": np.inf, "hashing": -1}[o.tfidf]
        size = runner.at_most(columns, limit) if o.tfidf != "memory" else 0
        if size is not None:
            (n_items, n_classes, scores), screened = small_scan(runner, plan, out=target)
            model, resumed = MEMBER, 0
        else:
            parts = _checkpoint_dir(out, o.checkpoint_dir)
            manifest = {"input": src.fingerprint(), "columns": list(columns.needed),
                        "id": columns.id, "text_pair": o.text_pair, "n_folds": plan.n_folds,
                        "random_state": seed, "hashing": vars(hashing),
                        "members": members, "screen": o.screen, "embed": embed.key()}
            checkpoint = Checkpoint(parts, manifest, resume=o.resume)
            try:
                (n_items, n_classes, scores), screened, resumed = hashed_scan(
                    runner, plan, hashing, checkpoint, out=target)
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
        screened=screened, engine=o.engine, n_folds=plan.n_folds, resumed_folds=resumed,
        seconds=time.perf_counter() - started, peak_rss_mb=_peak_rss_mb())




def _scorers(names: list[str], options: EmbedOptions) -> list[Any]:
    """The in-memory scan's members for ``names``: ``"tfidf"`` as it is, ``"embed"`` as
    the :class:`~labelaudit.models.EmbedScorer` of ``options``."""
    return [name if name != "embed" else EmbedScorer(
        model=options.model, pair_mode=options.pair_mode, C=options.C,
        batch_size=options.batch_size, max_length=options.max_length,
        cache_dir=options.cache_dir) for name in names]


def _screened(scorers: list[Any], data: Any, plan: _Plan, *, size: int | None,
              ) -> tuple[list[str], dict[str, float]]:
    """:func:`screen_members` on ``data``, the kept members by name."""
    kept, dropped = screen_members(data, scorers, size=size, n_folds=plan.options.n_folds,
                                   random_state=plan.seed, progress=plan.progress)
    return [m if isinstance(m, str) else m.name for m in kept], dropped


def small_scan(runner: Any, plan: _Plan, *, out: Path | str) -> tuple[Stats, dict[str, float]]:
    """All rows in memory: :func:`labelaudit.scan` (its folds as Ray tasks on the Ray
    engine), written in chunks."""
    import pandas as pd

    frames = list(runner.frames())
    frame = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    del frames
    columns, embed = plan.columns, plan.embed
    members: list[str] | None = plan.members
    screened: dict[str, float] = {}
    if runner.name == "ray" and len(frame):
        members, screened = _encode_on_ray(runner, plan, frame)
    default = members is None
    result = scan_frame(frame, dataclasses.replace(
        plan.options, out=None, id=columns.id, random_state=plan.seed, progress=plan.progress,
        scorers=None if default else _scorers(members or [], embed),
        model=embed.model if default else None,
        pair_mode=embed.pair_mode if default and columns.text_pair else None,
        # False (no cache) is passed on to EmbedScorer, which takes it
        cache_dir=cast(Any, embed.cache_dir) if default else None, engine=runner.name))
    del frame
    screened = {**screened, **result.screened}
    # CSV and TSV hold the evidence as a line, the others as structured values
    table = result.to_frame(readable=str(out).split("?")[0].lower().endswith((".csv", ".tsv")))
    scores = Scores(result.pred_probs, dict(result.member_probs), dict(result.weights),
                    dict(result.temperatures), result.scores, ranks(result.order), result.flagged,
                    result.flag_rule, result.n_issues_estimate, result.accuracy,
                    result.majority_rate)
    with writer_for(out) as writer:
        if len(table) == 0:
            writer.write(table)
        for start in range(0, len(table), plan.options.chunk_size):
            writer.write(table.iloc[start:start + plan.options.chunk_size])
    return (len(table), len(result.classes), scores), screened


def _encode_on_ray(runner: Any, plan: _Plan, frame: pd.DataFrame,
                   ) -> tuple[list[str] | None, dict[str, float]]:
    """Before the in-memory scan on Ray: screen the default members, and encode every row
    on the pool of encoder actors into the embedding cache, which the scan then reads."""
    columns = plan.columns
    members: list[str] | None = plan.members
    screened: dict[str, float] = {}
    # checked first, so that bad rows fail before any encoding
    data = prepare_text_dataset(frame, text=columns.text, label=columns.label,
                                text_pair=columns.text_pair, id=columns.id)
    if members is None and plan.options.screen and len(frame) > plan.options.screen:
        members, screened = _screened(_scorers(list(DEFAULT_SCORERS), plan.embed), data,
                                      plan, size=plan.options.screen)
    running = members if members is not None else list(DEFAULT_SCORERS)
    if "embed" in running and plan.embed.cache_dir is not False:
        with progress_bar(len(frame), "embedding (Ray actors)", unit=" rows",
                          enabled=plan.progress) as bar:
            runner.embedded(columns, plan.embed, n_rows=len(frame), folder=None,
                            progress=bar.update, keep=False)
    return members, screened


def hashed_scan(runner: Any, plan: _Plan, options: HashingOptions, checkpoint: Checkpoint, *,
                out: Path | str) -> tuple[Stats, dict[str, float], int]:
    """The out-of-core path: hash (checking every row), screen the default members on a
    sample, fit each member's folds (resuming finished ones), score, write."""
    wanted = plan.members if plan.members is not None else list(STREAMED_SCORERS)
    store = (runner.store(checkpoint.scratch("spill"), n_buckets=options.n_buckets)
             if "tfidf" in wanted else None)
    collector = Collector(plan.columns, options, plan.n_folds, plan.seed,
                          put=store.put if store is not None else _discard,
                          exact_folds=plan.options.n_folds is not None)
    with progress_bar(None, "hashing", unit=" rows", enabled=plan.progress) as bar:
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
                         top=plan.options.top, threshold=plan.options.threshold)
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
        with progress_bar(len(todo), f"fitting {len(todo)} folds ({what})", unit=" folds",
                  enabled=plan.progress) as bar:
            for prediction in fit(todo):
                checkpoint.save(prediction, name)
                probs[prediction.rows] = prediction.probs
                bar.update(1)
    return probs, len(done)


def _embeddings(runner: Any, plan: _Plan, n_items: int, checkpoint: Checkpoint) -> Any:
    """Every row's embedding, in input order (through the embedding cache)."""
    with progress_bar(n_items, "embedding", unit=" rows", enabled=plan.progress) as bar:
        return runner.embedded(plan.columns, plan.embed, n_rows=n_items,
                               folder=checkpoint.scratch("embed"), progress=bar.update)


def _screen(runner: Any, plan: _Plan, labels: np.ndarray, classes: np.ndarray,
            default: list[str]) -> tuple[list[str], dict[str, float]]:
    """The default members kept after screening them on a stratified sample of the rows
    (read again, the sample's texts only)."""
    if not plan.options.screen or len(labels) <= plan.options.screen or len(default) < 2:
        return default, {}
    sample = screen_sample(labels, size=plan.options.screen, random_state=plan.seed)
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
    sorter = RankSorter(checkpoint.scratch("sort"), part_size=plan.options.chunk_size)
    extras: dict[str, str] | None = None
    offset = 0
    with progress_bar(len(labels), "writing", unit=" rows", enabled=plan.progress) as bar:
        for frame in runner.frames():
            if extras is None:  # the input's columns a scan does not read, in input order
                kept = [n for n in map(str, frame.columns) if n not in columns.needed] \
                    if plan.options.keep_columns else []
                extras = output_names(kept, first=scores.first)
            rows = np.arange(offset, offset + len(frame))
            if offset + len(frame) > len(labels):
                raise _changed(len(labels), "more")
            sorter.add(chunk_table(frame, rows, columns=columns, labels=labels,
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


@dataclass(frozen=True)
class Scores:
    """The output's columns besides the input's own, as :class:`ScanResult` names them;
    ``rank`` is 1 for the most suspect (by ``ensemble``, stable for ties)."""

    pred_probs: Probs
    member_probs: dict[str, Probs]
    weights: dict[str, float]
    temperatures: dict[str, float]
    scores: dict[str, np.ndarray]
    rank: np.ndarray
    flagged: np.ndarray
    flag_rule: str
    n_issues_estimate: int
    accuracy: float
    majority_rate: float

    @property
    def first(self) -> str:
        """The member behind the ``loss`` method (``score_loss_<first>``)."""
        return next(iter(self.member_probs))


def score_probs(labels: np.ndarray, member_probs: dict[str, np.ndarray], *,
                top: int | None, threshold: float | None) -> Scores:
    """Ensemble, calibrate, score and flag as :func:`labelaudit.scan` does.

    Examples
    --------
    >>> probs = np.array([[0.9, 0.1], [0.8, 0.2], [0.3, 0.7], [0.2, 0.8]])
    >>> out = score_probs(np.array([0, 1, 1, 1]), {"tfidf": probs}, top=1, threshold=None)
    >>> out.rank.tolist(), out.flagged.tolist()
    ([4, 1, 2, 3], [False, True, False, False])
    """
    names = list(member_probs)
    ensemble = ensemble_pred_probs([member_probs[n] for n in names], labels, weights="auto")
    probs = ensemble.pred_probs
    # one process: cleanlab's pool forks, which can hang under Ray's threads
    scores, n_issues, _ = method_scores(labels, probs, member_probs[names[0]], None,
                                         list(UNANNOTATED_METHODS), n_jobs=1)
    rank = ranks(np.argsort(scores[DEFAULT_METHOD], kind="stable"))
    flagged, rule = flag_items(labels, probs, scores[DEFAULT_METHOD], n_issues, top=top,
                               threshold=threshold)
    return Scores(probs, dict(member_probs),
                  dict(zip(names, ensemble.weights.tolist(), strict=True)),
                  dict(zip(names, ensemble.temperatures.tolist(), strict=True)), scores,
                  rank, flagged, rule, n_issues, _accuracy(labels, probs),
                  _majority_rate(labels))


def output_names(extras: Sequence[str], first: str = MEMBER) -> dict[str, str]:
    """The output name of each extra column: ``input_<name>`` where it would clash with a
    labelaudit column (as :meth:`ScanResult.to_frame`; ``first``: ``score_loss_<first>``)."""
    taken = ["id", "text", "label", "suggested_label", "suggested_prob", "given_prob", "loss",
             "rank", "flagged", *(f"score_{m}" for m in UNANNOTATED_METHODS), f"score_loss_{first}"]
    return dict(zip(extras, map(str, input_names(list(extras), taken)), strict=True))


def chunk_table(frame: pd.DataFrame, rows: np.ndarray, *, columns: Columns,
                 labels: np.ndarray, classes: np.ndarray, scores: Scores,
                 extras: dict[str, str] | None) -> pd.DataFrame:
    """The output rows of one input chunk (``rows``: their positions in the input), in
    input order; ``extras`` maps the kept input columns to their output names."""
    import pandas as pd

    out = item_columns(frame[columns.id].to_numpy() if columns.id else rows,
                       _text(frame[columns.text]),
                       _text(frame[columns.text_pair]) if columns.text_pair else None,
                       labels[rows], classes, scores.pred_probs[rows])
    out["rank"] = scores.rank[rows]
    for method, values in scores.scores.items():
        out[score_column(method, scores.first)] = values[rows]
    out["flagged"] = scores.flagged[rows]
    result = pd.DataFrame(out)
    if extras:
        kept = frame[list(extras)].reset_index(drop=True)
        kept.columns = pd.Index(list(extras.values()))
        result = pd.concat([result, kept], axis=1)
    return result


def _text(values: pd.Series) -> list[str]:
    return values.astype(str).tolist()


def _checkpoint_dir(out: str | Path, given: str | Path | None) -> Path:
    """``given``, else ``<out>.parts`` beside a local output, else a folder named after
    the remote output under the system's temporary folder."""
    if given is not None:
        return Path(given)
    text = str(out).rstrip("/")
    if "://" in text:
        key = hashlib.sha256(text.encode()).hexdigest()[:16]
        return Path(tempfile.gettempdir()) / f"labelaudit-{key}.parts"
    return Path(f"{text}.parts")


def _runner(engine: str, source: Source, *, chunk_size: int, address: str | None,
            text: Sequence[str]) -> Any:
    """The engine's runner; ``text``: the columns a CSV holds as text (the id column)."""
    if engine == "ray":
        return RayRunner(source, chunk_size=chunk_size, address=address, text=text)
    return LocalRunner(source, chunk_size=chunk_size, text=text)
