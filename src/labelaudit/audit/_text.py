"""``scan``: rank every item of a text dataset by how likely its label is wrong."""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd

from labelaudit._errors import InvalidParameterError
from labelaudit._validation import check_choice, check_fraction, check_int
from labelaudit.audit._text_result import ChanceLevelWarning, ScanResult, warn_if_chance_level
from labelaudit.io import TextDataset, prepare_text_dataset, read_table, require_columns
from labelaudit.models._base import Scorer
from labelaudit.models._progress import default_progress
from labelaudit.registry import RANKING_METHODS, SCORERS

__all__ = ["METHODS", "DEFAULT_METHOD", "DEFAULT_METHODS", "ChanceLevelWarning", "ScanResult",
           "id_column", "scan"]

Method = Literal["loss", "ensemble", "self_confidence", "margin", "entropy", "max_prob",
                 "confident_learning", "crowdlab"]
METHODS: tuple[str, ...] = RANKING_METHODS.names()
DEFAULT_METHOD = "ensemble"
# self_confidence ranks exactly as ensemble does (-log p is monotone in p), so it is
# computed only when asked for; crowdlab only with annotations.
DEFAULT_METHODS: tuple[str, ...] = (*RANKING_METHODS.default, "crowdlab")


def id_column(frame: pd.DataFrame, id: str | None) -> str | None:  # noqa: A002
    """The id column to use: ``id`` when given, else a column named ``id`` if the table
    has one, else None (row numbers)."""
    if id is not None:
        return id
    return "id" if "id" in frame.columns else None


def _check_weights(weights: object, scorers: Sequence[str]) -> None:  # member names
    if isinstance(weights, str):
        if weights not in ("auto", "equal"):
            raise InvalidParameterError(
                f"weights must be 'auto', 'equal' or numbers; got {weights!r}")
        if weights == "equal" and len(scorers) < 2:
            raise InvalidParameterError(
                "weights='equal' needs at least two scorers; with one there is nothing to weigh")
        return
    values = list(weights)  # type: ignore[call-overload]
    if len(scorers) < 2:
        raise InvalidParameterError(
            "ensemble weights need at least two scorers; with one there is nothing to weigh")
    if len(values) != len(scorers):
        raise InvalidParameterError(
            f"give one weight per scorer: {len(values)} weights for {len(scorers)} scorers "
            f"({', '.join(scorers)})")
    try:
        numbers = [float(v) for v in values]
    except (TypeError, ValueError):
        raise InvalidParameterError(f"weights must be numbers; got {values!r}") from None
    if any(not np.isfinite(v) or v < 0 for v in numbers) or sum(numbers) <= 0:
        raise InvalidParameterError(
            f"weights must be non-negative numbers with a positive sum; got {numbers}")


def _as_frame(data: pd.DataFrame | str | Path) -> pd.DataFrame:
    return data if isinstance(data, pd.DataFrame) else read_table(data)


def _check_options(methods: Sequence[str], rank_by: str, top: int | None,
                   threshold: float | None, n_seeds: int, annotations: str | None) -> None:
    if annotations is None and "crowdlab" in [*methods, rank_by]:
        raise InvalidParameterError(
            "the crowdlab method needs several annotators' labels: give annotations=COLUMN "
            "(--annotations)")
    for method in methods:
        RANKING_METHODS.check(method)
    check_choice(rank_by, "rank_by", METHODS)
    if top is not None and threshold is not None:
        raise InvalidParameterError("give at most one of top and threshold")
    if top is not None:
        check_int(top, "top", minimum=0)
    if threshold is not None:
        check_fraction(threshold, "threshold")
    check_int(n_seeds, "n_seeds", minimum=1)


def scan(
    data: pd.DataFrame | str | Path, *, text: str = "text", label: str = "label",
    text_pair: str | None = None, id: str | None = None,  # noqa: A002 - mirrors the CLI flag
    score: pd.DataFrame | str | Path | None = None,
    scorers: Sequence[str | Scorer] | None = None,
    methods: Sequence[Method] | None = None, rank_by: Method | None = None,
    annotations: str | None = None,
    weights: Literal["auto", "equal"] | Sequence[float] = "auto", n_folds: int = 5,
    n_seeds: int = 1, random_state: int | None = 0, top: int | None = None,
    threshold: float | None = None, model: str | None = None,
    pair_mode: Literal["features", "joint"] | None = None,
    cache_dir: str | Path | None = None, progress: bool | None = None,
    sweep: int = 0, keep: int = 3, screen: int = 2000,
) -> ScanResult:
    """Rank every item by how likely its given label is wrong.

    Each scorer produces out-of-sample probabilities: stratified k-fold cross-fitting, so
    no item is scored by a model that saw it, or, with ``score``, a model fitted on
    ``data`` scores the ``score`` split (the test-set audit of Northcutt et al. 2021).
    The members are averaged with weights fitted to their out-of-sample log loss, and
    every ranking method is computed.

    Parameters
    ----------
    data : DataFrame or path
        The labelled table (training split when ``score`` is given).
    text, label, text_pair, id : str
        Column names; ``id`` defaults to a column named ``id`` when the table has one,
        else the row number (0-based).
    score : DataFrame or path, optional
        A second split to rank with models fitted on all of ``data``.
    scorers : sequence of {"tfidf", "embed", "finetune"} or Scorer objects, optional
        The ensemble's members; the first is the single model behind ``loss``. None (the
        default) is tfidf and embed with screening (``screen``); named members always run. A name is
        made with ``model``, ``pair_mode`` and ``cache_dir``; an object carries its own
        options (``FinetuneScorer(model="roberta-base", epochs=3, max_length=512)``), one
        object per member, so several models of one kind form an FME (reported as
        ``finetune[model]``).
    methods : sequence of str, optional
        Default: every method that applies, except ``self_confidence``, which ranks
        exactly as ``ensemble`` does (``-log p`` is monotone in ``p``). Any of ``loss``
        (FML, loss under the first scorer), ``ensemble`` (FME, loss under the weighted
        average of all members), ``self_confidence``, ``margin``, ``entropy``,
        ``max_prob`` (under the ensemble) and ``confident_learning`` (cleanlab's
        ``find_label_issues`` on the ensemble), and ``crowdlab`` (cleanlab's CROWDLAB on
        the ensemble and the annotators' labels; needs ``annotations``).
    rank_by : str, optional
        The method that orders the output: ``crowdlab`` when ``annotations`` are given,
        else ``ensemble``.
    annotations : str, optional
        A column of per-item lists of several annotators' labels (plain labels, or
        ``{"worker": id, "label": value}`` objects), for the ``crowdlab`` method.
    weights : "auto", "equal" or numbers
        Ensemble weights (see :func:`labelaudit.detect.ensemble_pred_probs`): one number
        per scorer; anything but "auto" needs at least two scorers.
    n_folds, n_seeds, random_state : int
        Folds of the cross-fitting; repeats with different folds and seeds (FME members).
        With ``score`` there are no folds, and a repeat differs only for scorers that are
        random (``finetune``).
    top, threshold : optional
        Flag the ``top`` most suspect items, or those whose given label has ensemble
        probability below ``threshold``; by default, as many as cleanlab estimates.
    model, pair_mode, cache_dir : options of the ``embed``/``finetune`` scorers named.
    screen : int, default=2000
        With the default members and more than ``screen`` items, each member is first
        cross-fitted on a stratified sample of ``screen`` items; a member whose ensemble
        weight there is below 0.05 is not run on the rest (its encoding is the slow part),
        and the summary says so. 0 turns screening off.
    sweep, keep : int
        With ``sweep`` > 0, every ``finetune`` member runs in ``sweep`` configurations
        (learning rate, epochs, seed) and the ``keep`` with the lowest out-of-sample log
        loss are averaged (the FME of Chong et al. 2022); the selection uses the same
        out-of-sample predictions the ranking then uses.
    progress : bool, optional
        Progress bars on stderr; by default shown when stderr is a terminal or in a
        Jupyter notebook.

    Returns
    -------
    ScanResult

    References
    ----------
    Chong, Hong & Manning (2022), Detecting Label Errors by using Pre-Trained Language
    Models (FML, FME). Northcutt, Athalye & Mueller (2021), Pervasive Label Errors in Test
    Sets Destabilize Machine Learning Benchmarks.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> words = {"sport": "match goal team", "food": "pasta sauce cook"}
    >>> rows = [(f"{words[c]} {rng.integers(100)}", c) for c in ["sport", "food"] * 20]
    >>> frame = pd.DataFrame(rows, columns=["text", "label"])
    >>> frame.loc[0, "label"] = "food"          # a planted error
    >>> result = scan(frame, scorers=["tfidf"])
    >>> int(result.to_frame()["id"].iloc[0])
    0
    """
    from labelaudit.detect import ensemble_pred_probs
    from labelaudit.models._registry import member_keys, member_pred_probs

    started = time.perf_counter()
    wanted: list[str] = (list(methods) if methods is not None else
                         [m for m in DEFAULT_METHODS if m != "crowdlab" or annotations is not None])
    order_by: str = (rank_by if rank_by is not None
                     else "crowdlab" if annotations is not None else DEFAULT_METHOD)
    _check_options(wanted, order_by, top, threshold, n_seeds, annotations)
    named = scorers is not None
    if scorers is not None and not scorers:
        raise InvalidParameterError("give at least one scorer")
    scorers = list(scorers) if scorers is not None else list(SCORERS.default)
    _check_weights(weights, member_keys(scorers))
    train, target, crowd_votes = _read_data(data, score, text=text, label=label,
                                            text_pair=text_pair, id=id, annotations=annotations)
    scored = target if target is not None else train
    assert scored.labels is not None
    shown = default_progress() if progress is None else progress
    screened: dict[str, float] = {}
    if not named and screen and len(train) > screen and weights == "auto":
        scorers, screened = _screen(train, scorers, size=screen, n_folds=n_folds,
                                    random_state=random_state, progress=shown, model=model,
                                    pair_mode=pair_mode, cache_dir=cache_dir)
    run = member_pred_probs(train, target, scorers=list(scorers), n_folds=n_folds,
                            n_seeds=n_seeds, random_state=random_state,
                            progress=default_progress() if progress is None else progress,
                            sweep=sweep, keep=keep, model=model, pair_mode=pair_mode,
                            cache_dir=cache_dir)
    # Repeats of one scorer (--seeds) are averaged first; the weights and temperatures are
    # then fitted per scorer, not per repeat.
    scorer_probs = run.per_scorer()
    ensemble = ensemble_pred_probs(list(scorer_probs.values()), scored.labels, weights=weights)
    pred_probs = ensemble.pred_probs
    scores, n_issues, consensus = _method_scores(
        scored.labels, pred_probs, next(iter(run.probs.values())), crowd_votes,
        list(dict.fromkeys([*wanted, order_by])))
    warn_if_chance_level(scored.labels, pred_probs)
    flagged, rule = _flag(scored.labels, pred_probs, scores[order_by], n_issues, top=top,
                          threshold=threshold)
    return ScanResult(
        ids=scored.ids, texts=scored.texts, text_pairs=scored.text_pairs, labels=scored.labels,
        classes=train.classes, pred_probs=pred_probs, member_probs=run.probs,
        weights=dict(zip(scorer_probs, ensemble.weights.tolist(), strict=True)),
        temperatures=dict(zip(scorer_probs, ensemble.temperatures.tolist(), strict=True)),
        scores=scores, rank_by=order_by,
        flagged=flagged, flag_rule=rule, n_issues_estimate=n_issues,
        seconds=time.perf_counter() - started, consensus_labels=consensus,
        member_seconds=dict(run.seconds), screened=screened,
        mode=("fit-on-train, score-on-test" if target is not None
              else f"{run.n_folds}-fold cross-fit"),
    )


SCREEN_WEIGHT = 0.05  # members below this ensemble weight on the screen are skipped


def _screen(train: TextDataset, scorers: list, *, size: int, n_folds: int,
            random_state: int | None, progress: bool, **options: Any,
            ) -> tuple[list, dict[str, float]]:
    """The default members worth running on all of ``train``: each is cross-fitted on a
    stratified sample of ``size`` items, the ensemble weights are fitted there, and a
    member under :data:`SCREEN_WEIGHT` is dropped (its weight returned, for the summary).
    The first member always stays (it is the one behind ``loss``)."""
    from sklearn.model_selection import train_test_split

    from labelaudit.detect import ensemble_pred_probs
    from labelaudit.models._registry import member_keys, member_pred_probs

    assert train.labels is not None  # noqa: S101 - the caller checked
    counts = np.bincount(train.labels)
    stratify = train.labels if counts[counts > 0].min() >= 2 else None
    sample, _ = train_test_split(np.arange(len(train)), train_size=size,
                                 random_state=random_state, stratify=stratify)
    sample = np.sort(sample)
    part = TextDataset(ids=train.ids[sample], texts=[train.texts[i] for i in sample],
                       text_pairs=None if train.text_pairs is None
                       else [train.text_pairs[i] for i in sample],
                       labels=train.labels[sample], classes=train.classes)
    run = member_pred_probs(part, scorers=scorers, n_folds=n_folds, random_state=random_state,
                            progress=progress, **options)
    probs = run.per_scorer()
    weight = dict(zip(probs, ensemble_pred_probs(list(probs.values()), part.labels)
                      .weights.tolist(), strict=True))
    keys = member_keys(scorers)
    kept = [s for i, (s, key) in enumerate(zip(scorers, keys, strict=True))
            if i == 0 or weight[key] >= SCREEN_WEIGHT]
    dropped = {key: weight[key] for key in keys[1:] if weight[key] < SCREEN_WEIGHT}
    return kept, dropped


def _read_data(
    data: pd.DataFrame | str | Path, score: pd.DataFrame | str | Path | None, *, text: str,
    label: str, text_pair: str | None, id: str | None,  # noqa: A002
    annotations: str | None,
) -> tuple[TextDataset, TextDataset | None, np.ndarray | None]:
    """The training data, the scored split (None: cross-fit) and the annotators' votes of
    the scored items (checked before any model work)."""
    from labelaudit.detect import annotation_matrix

    scored_frame = train_frame = _as_frame(data)
    train = prepare_text_dataset(train_frame, text=text, label=label, text_pair=text_pair,
                                 id=id_column(train_frame, id))
    target = None
    if score is not None:
        scored_frame = _as_frame(score)
        target = prepare_text_dataset(scored_frame, text=text, label=label,
                                      text_pair=text_pair, id=id_column(scored_frame, id),
                                      classes=train.classes, min_classes=1)
    if annotations is None:
        return train, target, None
    require_columns(scored_frame, [annotations])
    ids = (target if target is not None else train).ids
    return train, target, annotation_matrix(scored_frame[annotations], train.classes, ids)


def _method_scores(
    labels: np.ndarray, pred_probs: np.ndarray, first_member: np.ndarray,
    crowd_votes: np.ndarray | None, methods: list[str],
) -> tuple[dict[str, np.ndarray], int, np.ndarray | None]:
    """Every method's scores, cleanlab's estimated error count, CROWDLAB's consensus."""
    from labelaudit.detect import confident_learning, crowdlab, label_quality_scores

    cl = confident_learning(labels, pred_probs)
    crowd = None if crowd_votes is None else crowdlab(labels, pred_probs, crowd_votes)
    scores: dict[str, np.ndarray] = {}
    for method in methods:
        if method == "loss":
            scores[method] = label_quality_scores(labels, first_member)
        elif method == "ensemble":
            scores[method] = label_quality_scores(labels, pred_probs, method="loss")
        elif method == "confident_learning":
            scores[method] = cl.scores
        elif method == "crowdlab":
            assert crowd is not None
            scores[method] = crowd.scores
        else:
            scores[method] = label_quality_scores(labels, pred_probs,
                                                  method=method)  # type: ignore[arg-type]
    return scores, cl.n_issues, None if crowd is None else crowd.consensus_labels


def _flag(labels: np.ndarray, pred_probs: np.ndarray, ranking: np.ndarray, n_issues: int, *,
          top: int | None, threshold: float | None) -> tuple[np.ndarray, str]:
    """Which items are flagged, and the rule that says so."""
    if threshold is not None:
        flagged = pred_probs[np.arange(len(labels)), labels] < threshold
        return flagged, f"given-label probability < {threshold}"
    count = n_issues if top is None else min(top, len(labels))
    flagged = np.zeros(len(labels), dtype=bool)
    flagged[np.argsort(ranking, kind="stable")[:count]] = True
    return flagged, f"top {count}" + (" (cleanlab's estimated count)" if top is None else "")
