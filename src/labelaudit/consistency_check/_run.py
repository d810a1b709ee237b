"""``consistency``: the learning-curve test of Zeng et al. as one function with a verdict."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import numpy as np

from labelaudit._errors import InvalidParameterError
from labelaudit._validation import check_choice, check_int
from labelaudit.consistency_check._data import (
    IDENTIFY,
    VALIDATE,
    Pool,
    draw_schemes,
    text_pool,
    token_pool,
)
from labelaudit.consistency_check._fits import (
    FitStore,
    curve_trees,
    describe_plan,
    fit_all,
    settings_key,
)
from labelaudit.consistency_check._result import (
    ConsistencyResult,
    SchemeCurve,
    SchemeVerdict,
    t_half_width,
)
from labelaudit.engine import mapped_rows
from labelaudit.io import check_distinct_files, warn_overlap
from labelaudit.models import (
    Engine,
    Scorer,
    check_fits,
    claim_checkpoint_folder,
    default_threads,
    make_scorer,
    make_token_scorer,
    progress_bar,
    worker_pool,
)
from labelaudit.scanning import ChanceLevelWarning

# Adaptive repeats start with this many (a t interval needs a few), then add one at a time
# (its fits spread over the workers) until every verdict is decided.
MIN_REPEATS = 3
# A gap's interval narrower than this decides its verdict even when it includes 0.
DECIDED_WIDTH = 0.02

TEXT_METRICS = ("accuracy", "macro_f1")
_BOOTSTRAP = 2000


def curve_grid(length: int, n_points: int) -> np.ndarray:
    """``n_points`` prefix sizes evenly spread over 1..length, the last the whole scheme.

    Examples
    --------
    >>> curve_grid(100, 4).tolist()
    [25, 50, 75, 100]
    """
    points = np.unique(np.round(np.arange(1, n_points + 1) * length / n_points).astype(int))
    return points[points > 0]


def _decided(scores: dict[str, np.ndarray], pairs: dict[str, str],
             grids: dict[str, np.ndarray], confidence_level: float, width: float) -> bool:
    """Every compared gap's t interval excludes 0 or is narrower than ``width``: more
    repeats would not change a verdict."""
    for name, reference in pairs.items():
        gaps = _gap(scores[name], scores[reference], grids[name])
        half = t_half_width(gaps, confidence_level)
        if not (abs(gaps.mean()) > half or 2 * half < width):
            return False
    return True


def _interval(gaps: np.ndarray, rng: np.random.Generator, confidence_level: float,
              method: str) -> tuple[float, float]:
    """Interval of the mean gap over repeats: Student's t, or the percentile bootstrap
    (resampling repeats), which is too narrow for few repeats (about 84 % coverage for a
    nominal 95 % with 5 repeats of normal gaps), hence t by default."""
    if method == "bootstrap":
        means = gaps[rng.integers(0, len(gaps), size=(_BOOTSTRAP, len(gaps)))].mean(axis=1)
        tail = (1 - confidence_level) / 2
        low, high = np.quantile(means, [tail, 1 - tail])
        return float(low), float(high)
    half = float(t_half_width(gaps, confidence_level))
    return float(gaps.mean() - half), float(gaps.mean() + half)


def _near_chance(pool: Pool, draws: list, reference: np.ndarray, metric: str) -> None:
    """Warn when the pure-training model is barely better than the majority class of the
    new test set: its curves cannot tell consistent from inconsistent labels."""
    if pool.kind != "text" or metric != "accuracy":
        return
    labels = np.asarray(pool.labels)
    majority = float(np.mean([np.bincount(labels[d.test]).max() / len(d.test)
                              for d in draws]))
    accuracy = float(reference[:, -1].mean())
    if accuracy < majority + 0.05:
        warnings.warn(
            f"the model fed all of PureTrain reaches accuracy {accuracy:.3f} on the new test "
            f"set against {majority:.3f} for the majority class: near chance, the curves "
            "cannot show whether the labels are consistent (try a stronger --scorer)",
            ChanceLevelWarning, stacklevel=3)


def _consistency_verdict(low: float, high: float) -> str:
    """A scheme against its training-only reference: worse beyond chance, or not."""
    return "inconsistent" if high < 0 else "consistent"


def _correction_verdict(low: float, high: float) -> str:
    """The corrected labels against the original ones on the same items."""
    if high < 0:
        return "correction helps"
    return "correction hurts" if low > 0 else "no difference shown"


def _gap(curve: np.ndarray, reference: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """Signed area between two curves per item fed, per repeat (rows)."""
    diff = curve - reference
    if len(sizes) < 2:
        return diff[:, 0]
    return np.trapezoid(diff, sizes, axis=1) / float(sizes[-1] - sizes[0])


def _load(train: Any, suspect: Any, corrected: Any, text: str | None, label: str,
          text_pair: str | None, id: str | None, scheme: Any,  # noqa: A002
          tag_column: int) -> Pool:
    check_distinct_files([("train", train), ("suspect", suspect)], why="the test measures "
                         "whether a suspect set follows the training set's labelling rules, "
                         "so it cannot be the training set; give a set of other items")
    check_distinct_files([("suspect", suspect), ("corrected", corrected)], why="the "
                         "corrected file is the suspect set with corrected labels, a copy")
    if text is None:
        if text_pair is not None:
            raise InvalidParameterError("text_pair goes with text: give text too",
                                        param=("text_pair", "text"))
        pool = token_pool(train, suspect, corrected, scheme=scheme, tag_column=tag_column)
        keys: list[Any] = [tuple(tokens) for tokens in pool.data.tokens]
    else:
        pool = text_pool(train, suspect, corrected, text=text, label=label,
                         text_pair=text_pair, id=id)
        pairs = pool.data.text_pairs or [""] * len(pool.data.texts)
        keys = list(zip(pool.data.texts, pairs, strict=True))
    warn_overlap(("training", keys[:pool.n_train]),
                 ("suspect", keys[pool.n_train:pool.n_train + pool.n_suspect]),
                 why="items also in the training set agree with it by construction, so the "
                 "verdict says little; drop them from the suspect set",
                 same="tokens" if text is None else "text")
    return pool


def _scorer(pool: Pool, scorer: Any) -> tuple[Any, str]:
    if isinstance(scorer, Scorer):
        return scorer, getattr(scorer, "name", type(scorer).__name__)
    name = scorer or ("encoder" if pool.kind == "tokens" else "tfidf")
    # the registries refuse an unknown name, listing the known ones
    if pool.kind == "text":
        return make_scorer(name), name
    # the encoder: each word's own vector (window 0), the smallest model with the verdicts
    # of the larger one on CoNLL-2003, and 2 to 4 times faster
    return make_token_scorer(name, **({"window": 0} if name == "encoder" else {})), name


def consistency(
    train: Any,
    suspect: Any,
    corrected: Any = None,
    *,
    text: str | None = None,
    label: str = "label",
    text_pair: str | None = None,
    id: str | None = "id",  # noqa: A002 - mirrors the CLI flag
    scheme: Any = None,
    tag_column: int = -1,
    scorer: Any = None,
    metric: str | None = None,
    size: int | None = None,
    train_size: int | None = None,
    repeats: int = 5,
    n_points: int = 10,
    confidence_level: float = 0.95,
    interval: str = "t",
    random_state: int = 0,
    workers: int | None = None,
    engine: Engine = "local",
    ray_address: str | None = None,
    adaptive: bool = True,
    width: float = DECIDED_WIDTH,
    warm_start: bool = True,
    checkpoint_dir: str | Path | None = None,
    progress: bool = False,
    on_plan: Callable[[str], None] | None = None,
) -> ConsistencyResult:
    """Test whether a suspect set is labelled by the same rules as a training set.

    The learning-curve test of Zeng et al. (see the package docstring): a suspect set
    labelled by other rules is less predictive of the training labels, so its suspect-first
    curve runs below the pure training one.

    Parameters
    ----------
    train, suspect : path, DataFrame or TokenDataset
        Tables with ``text`` (and ``text_pair``) and ``label`` columns, or, when ``text`` is
        None, tagged files (CoNLL or token JSONL).
    corrected : path, DataFrame or TokenDataset, optional
        The suspect set with corrected labels: the same sentences and tokens, or the same
        items (matched by ``id``, else by row).
    scorer : str or Scorer, optional
        ``tfidf`` (text, default), ``embed`` or ``finetune``; ``encoder`` (tokens, default:
        MiniLM word vectors with a CRF head) or ``finetune``.
    metric : {"accuracy", "macro_f1"}, optional
        Text score (default accuracy); token data is scored by entity-level micro F1 (token
        accuracy for tags without spans).
    size, train_size : int, optional
        x, the size of each training subset and of the new test set (default: the suspect
        set's size), and w, the training subset of Figure 2 (default ``size``).
    repeats : int
        Redraws of every subset (at most, with ``adaptive``).
    adaptive : bool
        Start with :data:`MIN_REPEATS` repeats and add one while some verdict's gap interval
        includes 0 and is wider than ``width``.
    warm_start : bool
        With a scorer that can (the token ``encoder``), start each point from the fit before.
    checkpoint_dir : path, optional
        Keep every finished fit here; a rerun of an interrupted run reuses them.
    interval : {"t", "bootstrap"}
        Interval of a verdict's mean gap over repeats: Student's t, or the percentile
        bootstrap (about 84 % coverage for a nominal 95 % with 5 repeats).
    n_points : int
        Prefix sizes per curve.
    workers, engine, ray_address
        Processes that fit at once (default one per free core), or Ray tasks; the result does
        not depend on them.
    on_plan : callable, optional
        Called before the fits with one line: the fits, the repeats and about how long.

    Returns
    -------
    ConsistencyResult

    References
    ----------
    Zeng, Huang, Liu, Jiang, "Validating Label Consistency in NER Data Annotation" (2021).

    Examples
    --------
    >>> import pandas as pd
    >>> rng = np.random.default_rng(0)
    >>> words = {"a": "goal match team", "b": "code chip app"}
    >>> def table(n):
    ...     labels = rng.choice(["a", "b"], n)
    ...     return pd.DataFrame({"text": [f"{words[y]} w{rng.integers(9)}" for y in labels],
    ...                          "label": labels})
    >>> result = consistency(table(60), table(10), text="text", repeats=2, n_points=2,
    ...                      workers=1, adaptive=False)
    >>> result.verdict in ("consistent", "inconsistent"), result.repeats
    (True, 2)
    """
    check_int(repeats, "repeats", minimum=2)
    check_int(n_points, "n_points", minimum=2)
    check_choice(interval, "interval", ("t", "bootstrap"))
    check_int(random_state, "random_state", minimum=0)
    if workers is None:
        workers = default_threads()
    check_fits(workers, engine, ray_address)
    if not 0.0 <= width < 1.0:
        raise InvalidParameterError(f"width must be in [0, 1); got {width}", param="width")
    if not 0.0 < confidence_level < 1.0:
        raise InvalidParameterError(f"confidence_level must be in (0, 1), got {confidence_level}",
                                    param="confidence_level")
    if checkpoint_dir is not None:  # before any reading: a bad folder costs no work
        claim_checkpoint_folder(checkpoint_dir)
    pool = _load(train, suspect, corrected, text, label, text_pair, id, scheme, tag_column)
    if pool.kind == "tokens":
        if metric not in (None, "entity_f1"):
            raise InvalidParameterError(
                f"metric {metric!r} is for text; token data is scored by entity F1",
                param="metric")
        metric = "token_accuracy" if pool.plain else "entity_f1"
    else:
        metric = check_choice(metric or "accuracy", "metric", TEXT_METRICS)
    x = pool.n_suspect if size is None else check_int(size, "size", minimum=1)
    w = None if train_size is None else check_int(train_size, "train_size", minimum=1)
    model, scorer_name = _scorer(pool, scorer)
    rng = np.random.default_rng(random_state)
    draws = [draw_schemes(pool.n_train, pool.n_suspect, size=x, rng=rng,
                          mistakes=pool.mistakes, extra=w) for _ in range(repeats)]
    names = list(draws[0].schemes)
    grids = {name: curve_grid(len(draws[0].order(name)), n_points) for name in names}
    # each scheme's training-only reference, and each Mistake scheme's Correct twin
    references = dict(IDENTIFY, **(VALIDATE if pool.mistakes is not None else {}))
    twins = {shape.format("Mistake"): shape.format("Correct") for shape in
             ("TestTrain{}", "PureTrain{}", "{}TestTrain", "{}PureTrain")
             } if pool.mistakes is not None else {}
    features = model.prepare(pool.data, progress=progress)
    warm = warm_start and bool(getattr(model, "warm_starts", False))
    store = FitStore(checkpoint_dir, pool, scorer_name, metric,
                     variant=("warm " if warm else "") + settings_key(model)
                     ) if checkpoint_dir else None
    first, where = curve_trees(draws[:1], names, grids, warm=warm)
    per_repeat = len(set(where.values()))
    if on_plan is not None:
        on_plan(describe_plan(
            pool, model, features, first, warm=warm, n_schemes=len(names), n_points=n_points,
            repeats=(min(MIN_REPEATS, repeats) if adaptive else repeats, repeats),
            workers=workers, engine=engine))
    scores = {name: np.zeros((0, len(grids[name]))) for name in names}
    n_fits = 0
    with ExitStack() as stack:
        bar = stack.enter_context(progress_bar(
            per_repeat * repeats, f"learning curves: {per_repeat} fits a repeat, "
            f"{repeats if not adaptive else f'{MIN_REPEATS} to {repeats}'} repeats",
            unit=" fits", enabled=progress))
        rows = stack.enter_context(mapped_rows(features, enabled=workers > 1
                                               and engine == "local"))
        # worker processes map the word vectors from one file instead of a copy each, and
        # the same workers fit every batch of repeats
        shared = (pool, model, rows, metric)
        kept = stack.enter_context(worker_pool(shared, workers, engine))
        done = 0
        while done < repeats:
            upto = min(repeats, max(MIN_REPEATS if adaptive else repeats, done + 1))
            tasks, where = curve_trees(draws[done:upto], names, grids, warm=warm)
            fitted = fit_all(tasks, store, shared=shared, workers=workers, engine=engine,
                         ray_address=ray_address, bar=bar, kept=kept)
            n_fits += len(fitted)
            batch = {name: np.zeros((upto - done, len(grids[name]))) for name in names}
            for (name, r, k), task in where.items():
                batch[name][r, k] = fitted[task]
            scores = {name: np.vstack([scores[name], batch[name]]) for name in names}
            done = upto
            if adaptive and _decided(scores, {**references, **twins}, grids,
                                     confidence_level, width):
                break
    repeats_used = done
    curves = {name: SchemeCurve.from_scores(name, grids[name], scores[name], confidence_level)
              for name in names}
    _near_chance(pool, draws[:repeats_used], scores["PureTrain"], metric)
    boot = np.random.default_rng([random_state, 1])

    def verdict(name: str, reference: str, decide: Callable[[float, float], str]
                ) -> SchemeVerdict:
        """``name``'s gap to ``reference`` over the repeats, its interval and verdict (the
        intervals draw from ``boot`` in turn: the verdicts first, then the corrections)."""
        gaps = _gap(scores[name], scores[reference], grids[name])
        low, high = _interval(gaps, boot, confidence_level, interval)
        return SchemeVerdict(name, reference, float(gaps.mean()), low, high,
                             decide(low, high), tuple(map(float, gaps)))

    verdicts = {name: verdict(name, reference, _consistency_verdict)
                for name, reference in references.items()}
    corrections = {wrong: verdict(wrong, fixed, _correction_verdict)
                   for wrong, fixed in twins.items()}
    y = pool.n_suspect - (len(pool.mistakes) if pool.mistakes is not None else 0)
    sizes = {"train": pool.n_train, "suspect": pool.n_suspect, "x": x}
    if pool.mistakes is not None:
        sizes.update(y=y, w=x if w is None else w, z=len(pool.mistakes))
    return ConsistencyResult(
        kind=pool.kind, metric=metric,
        scorer=f"{scorer_name} (warm-started)" if warm else scorer_name, sizes=sizes,
        repeats=repeats_used,
        confidence_level=confidence_level, curves=curves, verdicts=verdicts,
        corrections=corrections, n_fits=n_fits, random_state=random_state,
        interval=interval, max_repeats=repeats)

