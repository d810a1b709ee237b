"""The streamed engine of a scan: data too big for memory read, scored and written chunk
by chunk (:func:`stream_chunks`, which :func:`~labelaudit.scanning.scan_stream` runs), and
``labelaudit.scan(data, out=...)``'s way to it (:func:`scan_in_chunks`)."""

from __future__ import annotations

import resource
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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
from labelaudit.scanning._options import check_flagging, check_preset
from labelaudit.scanning._stream_output import MEMBER, RANK_BY
from labelaudit.scanning._stream_passes import hashed_scan, small_scan
from labelaudit.scanning._summary import ScanFacts, format_scan_summary
from labelaudit.scanning._text_result import chance_note

__all__ = ["HASHING_THRESHOLD", "StreamScanResult", "scan_in_chunks", "stream_chunks"]

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
        :meth:`labelaudit.scanning.ScanResult.to_frame`.
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
        :func:`labelaudit.scanning.format_scan_summary`)."""
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


def stream_chunks(source: str | Path | list[str | Path], *, text: str, label: str,
                  text_pair: str | None, id: str | None,  # noqa: A002 - mirrors the CLI flag
                  out: str | Path, scorers: Sequence[str] | None, engine: str,
                  ray_address: str | None, chunk_size: int, n_folds: int,
                  random_state: int | None, top: int | None, threshold: float | None,
                  resume: bool, progress: bool | None, tfidf: str, hashing_threshold: int,
                  hashing: HashingOptions | None, embed: EmbedOptions | None, screen: int,
                  keep_columns: bool, checkpoint_dir: str | Path | None, overwrite: bool,
                  in_memory: Callable[..., Any]) -> StreamScanResult:
    """:func:`~labelaudit.scanning.scan_stream`, whose parameters these are; ``in_memory`` is
    the scan in memory (:func:`labelaudit.scanning.scan`), which ranks data small enough for
    memory."""
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
    plan = _Plan(in_memory=in_memory, columns=columns, members=members, embed=embedding,
                 screen=screen, n_folds=n_folds, seed=seed, top=top, threshold=threshold,
                 keep_columns=keep_columns, progress=shown, chunk_size=chunk_size,
                 checkpoint_dir=checkpoint_dir, resume=resume)
    with _runner(engine, src, chunk_size=chunk_size, address=ray_address,
                 text=[columns.id] if columns.id else []) as runner:
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



def scan_in_chunks(data: Any, *, out: str | Path, scorers: Any, preset: str | None,
                   model: str | None, pair_mode: str | None, cache_dir: str | Path | None,
                   text: str, label: str, text_pair: str | None, id: str | None,  # noqa: A002
                   engine: str, ray_address: str | None, chunk_size: int, n_folds: int,
                   random_state: int | None, top: int | None, threshold: float | None,
                   resume: bool, progress: bool | None, screen: int, keep_columns: bool,
                   checkpoint_dir: str | Path | None, overwrite: bool,
                   in_memory: Callable[..., Any], **others: Any) -> StreamScanResult:
    """``scan(data, out=out, ...)``: :func:`stream_chunks` with scan's options (``others``:
    those a streamed scan does not take, which must keep their defaults; ``in_memory``:
    scan itself); a preset is its members, and ``model``, ``pair_mode`` and ``cache_dir``
    set the embed member."""
    from labelaudit.engine import first_rows_hold_label_sets, is_streamable
    from labelaudit.scanning._plan import _named, memory_needs
    from labelaudit.scanning._presets import preset_names

    check_preset(preset, scorers)
    named = preset_names(preset) if preset is not None else scorers
    needs = memory_needs({**others, "scorers": named})
    if preset is not None and any(n.startswith("scorers=") for n in needs):
        needs = [n for n in needs if not n.startswith("scorers=")] + [f"preset={preset!r}"]
    if needs:
        raise InvalidParameterError(
            f"out= streams the scan in chunks, and {_named(needs)} "
            f"need{'s' if len(needs) == 1 else ''} every item in memory: drop "
            f"{'it' if len(needs) == 1 else 'them'}, or drop out= (the scan then runs in "
            "memory; write its result with result.write(path))")
    if not is_streamable(data):
        raise InvalidParameterError(
            f"out= streams the scan from files in chunks (Parquet, CSV, TSV or JSON lines: a "
            f"file, a folder, a glob or a URI); {_described(data)} is not one: drop out= and "
            "write the result with result.write(path)")
    if first_rows_hold_label_sets(data, label):
        raise InvalidParameterError(
            f"out= streams the scan in chunks, one label per item, and column {label!r} "
            "holds label sets (multi-label), which scan in memory: drop out= and engine= "
            "(write the result with result.write(path))")
    embed = EmbedOptions(model=model, pair_mode=pair_mode or "features",  # type: ignore[arg-type]
                         cache_dir=cache_dir)
    return stream_chunks(data, text=text, label=label, text_pair=text_pair, id=id, out=out,
                         scorers=None if named is None else list(named), engine=engine,
                         ray_address=ray_address, chunk_size=chunk_size, n_folds=n_folds,
                         random_state=random_state, top=top, threshold=threshold,
                         resume=resume, progress=progress, embed=embed, screen=screen,
                         keep_columns=keep_columns, checkpoint_dir=checkpoint_dir,
                         overwrite=overwrite, tfidf="auto",
                         hashing_threshold=HASHING_THRESHOLD, hashing=None, in_memory=in_memory)


def _described(data: Any) -> str:
    """``data`` as a message names it: a path as given, anything else by its type."""
    if isinstance(data, (str, Path)):
        return repr(str(data))
    return f"a {type(data).__name__}"


@dataclass(frozen=True)
class _Plan:
    """The options every step of a streamed scan reads."""

    in_memory: Callable[..., Any]  # labelaudit.scanning.scan, for data small enough for memory
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


def _runner(engine: str, source: Source, *, chunk_size: int, address: str | None,
            text: Sequence[str]) -> Any:
    """The engine's runner; ``text``: the columns a CSV holds as text (the id column)."""
    if engine == "ray":
        from labelaudit.engine import RayRunner

        return RayRunner(source, chunk_size=chunk_size, address=address, text=text)
    from labelaudit.engine import LocalRunner

    return LocalRunner(source, chunk_size=chunk_size, text=text)
