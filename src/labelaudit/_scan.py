"""``scan``: rank every item of a text dataset by how likely its label is wrong."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd

from labelaudit._errors import InvalidParameterError
from labelaudit._validation import check_choice, check_fraction, check_int
from labelaudit.io import prepare_text_dataset, read_table, require_columns
from labelaudit.registry import RANKING_METHODS, SCORERS

__all__ = ["METHODS", "DEFAULT_METHOD", "DEFAULT_METHODS", "ChanceLevelWarning", "ScanResult",
           "id_column", "scan"]


class ChanceLevelWarning(UserWarning):
    """The scorers predict no better than always guessing the most common class."""


Method = Literal["loss", "ensemble", "self_confidence", "margin", "entropy", "max_prob",
                 "confident_learning", "crowdlab"]
METHODS: tuple[str, ...] = RANKING_METHODS.names()
DEFAULT_METHOD = "ensemble"
# self_confidence ranks exactly as ensemble does (-log p is monotone in p), so it is
# computed only when asked for; crowdlab only with annotations.
DEFAULT_METHODS: tuple[str, ...] = (*RANKING_METHODS.default, "crowdlab")


@dataclass(frozen=True)
class ScanResult:
    """The outcome of :func:`scan`: out-of-sample probabilities and every method's scores.

    Attributes
    ----------
    ids, texts, text_pairs : the scored items (``text_pairs`` None for single texts).
    labels : ndarray of int, shape (n_samples,)
        Given labels as indices into ``classes``.
    classes : ndarray of shape (n_classes,)
        The user's label values.
    pred_probs : ndarray of shape (n_samples, n_classes)
        Out-of-sample probabilities of the ensemble of all members.
    member_probs : dict of str to ndarray (n_samples, n_classes)
        Each member's out-of-sample probabilities (scorer name, ``#seed`` for repeats).
    weights : dict of str to float
        The ensemble weight of each scorer (its seed repeats averaged first).
    temperatures : dict of str to float
        The temperature each scorer was scaled by before averaging (1 = unchanged).
    scores : dict of str to ndarray (n_samples,)
        Label-quality score of every method asked for; lower = more suspect.
    rank_by : str
        The method that orders the output.
    flagged : ndarray of bool, shape (n_samples,)
    flag_rule : str
        How ``flagged`` was decided.
    n_issues_estimate : int
        cleanlab's estimate of the number of label errors.
    seconds : float
        Wall time of the scan.
    """

    ids: np.ndarray
    texts: list[str]
    text_pairs: list[str] | None
    labels: np.ndarray
    classes: np.ndarray
    pred_probs: np.ndarray
    member_probs: dict[str, np.ndarray]
    weights: dict[str, float]
    temperatures: dict[str, float]
    scores: dict[str, np.ndarray]
    rank_by: str
    flagged: np.ndarray
    flag_rule: str
    n_issues_estimate: int
    seconds: float
    mode: str = field(default="cross-fit")
    consensus_labels: np.ndarray | None = None

    @property
    def accuracy(self) -> float:
        """Out-of-sample accuracy of ``pred_probs`` against the given labels."""
        return float((self.pred_probs.argmax(axis=1) == self.labels).mean())

    @property
    def order(self) -> np.ndarray:
        """Item positions, most suspect first (stable for ties)."""
        return np.argsort(self.scores[self.rank_by], kind="stable")

    def score_column(self, method: str) -> str:
        """The output column of a method's scores (``loss`` names its scorer)."""
        if method == "loss":
            return f"score_loss_{next(iter(self.weights))}"
        return f"score_{method}"

    @property
    def near_chance(self) -> bool:
        """True when out-of-sample accuracy is within 0.05 of the majority-class rate."""
        return _near_chance(self.labels, self.pred_probs)

    def to_frame(self) -> pd.DataFrame:
        """One row per item, most suspect first.

        Columns: ``id, text, [text_pair,] label, suggested_label, suggested_prob,
        given_prob, loss, rank, score_<method>..., flagged``; labels use the user's values.
        Every ``score_*`` is a label-quality score, lower = more suspect. ``loss`` is the
        ensemble's ``-log p(label)``; the ``loss`` method (the first scorer alone, FML) is
        written as ``score_loss_<scorer>``. ``score_crowdlab`` is CROWDLAB's consensus
        quality score (in [0, 1]) where the consensus equals the given label and that
        score minus 2 (in [-2, -1]) where it does not, so those items rank first.
        """
        from labelaudit.detect import per_item_loss, suggest_labels

        suggested, suggested_prob = suggest_labels(self.labels, self.pred_probs)
        columns: dict[str, Any] = {"id": self.ids, "text": self.texts}
        if self.text_pairs is not None:
            columns["text_pair"] = self.text_pairs
        columns.update(
            label=self.classes[self.labels],
            suggested_label=self.classes[suggested],
            suggested_prob=suggested_prob,
            given_prob=self.pred_probs[np.arange(len(self.labels)), self.labels],
            loss=per_item_loss(self.labels, self.pred_probs),
        )
        frame = pd.DataFrame(columns)
        order = self.order
        rank = np.empty(len(order), dtype=np.int64)
        rank[order] = np.arange(1, len(order) + 1)
        frame["rank"] = rank
        for method, values in self.scores.items():
            frame[self.score_column(method)] = values
        if self.consensus_labels is not None:
            frame["consensus_label"] = self.classes[self.consensus_labels]
        frame["flagged"] = self.flagged
        return frame.iloc[order].reset_index(drop=True)

    def summary(self) -> str:
        """A few lines for a person: items, classes, estimated errors, accuracy, time."""
        weights = ", ".join(f"{k} {v:.2f} (T={self.temperatures[k]:.2f})"
                            for k, v in self.weights.items())
        n = max(len(self.labels), 1)
        majority = float(np.bincount(self.labels).max() / n) if len(self.labels) else 0.0
        weak = ""
        if self.near_chance:
            weak = (f"\n  the models are near chance level (accuracy {self.accuracy:.3f} vs "
                    f"{majority:.3f} for always the most common class): many flags are the "
                    "models' mistakes, not label errors")
        return (
            f"items: {len(self.labels)}  classes: {len(self.classes)}  mode: {self.mode}\n"
            f"estimated label errors (cleanlab): {self.n_issues_estimate} "
            f"({self.n_issues_estimate / n:.1%})\n"
            f"flagged: {int(self.flagged.sum())} ({self.flagged.sum() / n:.1%}; "
            f"{self.flag_rule})  ranked by: {self.rank_by}{weak}\n"
            f"out-of-sample accuracy: {self.accuracy:.3f} (most common class: {majority:.3f})"
            f"  ensemble weights: {weights}\n"
            f"time: {self.seconds:.1f}s"
        )


def default_progress() -> bool:
    """Progress bars by default: on a terminal, or in a Jupyter kernel."""
    import sys

    if sys.stderr is not None and hasattr(sys.stderr, "isatty") and sys.stderr.isatty():
        return True
    shell = sys.modules.get("IPython")
    if shell is None:
        return False
    try:
        ip = shell.get_ipython()  # type: ignore[attr-defined]
    except Exception:  # pragma: no cover - an odd IPython
        return False
    return ip is not None and "IPKernelApp" in getattr(ip, "config", {})


def id_column(frame: pd.DataFrame, id: str | None) -> str | None:  # noqa: A002
    """The id column to use: ``id`` when given, else a column named ``id`` if the table
    has one, else None (row numbers)."""
    if id is not None:
        return id
    return "id" if "id" in frame.columns else None


def _check_weights(weights: object, scorers: Sequence[str]) -> None:
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


def _near_chance(labels: np.ndarray, pred_probs: np.ndarray) -> bool:
    if len(labels) == 0:
        return False
    accuracy = float((pred_probs.argmax(axis=1) == labels).mean())
    return accuracy < float(np.bincount(labels).max() / len(labels)) + 0.05


def _warn_if_chance_level(labels: np.ndarray, pred_probs: np.ndarray) -> None:
    import warnings

    accuracy = float((pred_probs.argmax(axis=1) == labels).mean())
    majority = float(np.bincount(labels).max() / len(labels))
    if _near_chance(labels, pred_probs):
        warnings.warn(
            f"out-of-sample accuracy {accuracy:.2f} is "
            f"{'barely above' if accuracy > majority else 'no better than'} always predicting "
            f"the most common class ({majority:.2f}): the scorers have not learned this task, "
            "so the ranking is close to random and the estimated error count is unreliable; "
            "fit on a real training split with --score, or use a model that knows the task "
            "(--model)",
            ChanceLevelWarning, stacklevel=3,
        )


def scan(
    data: pd.DataFrame | str | Path,
    *,
    text: str = "text",
    label: str = "label",
    text_pair: str | None = None,
    id: str | None = None,  # noqa: A002 - mirrors the CLI flag
    score: pd.DataFrame | str | Path | None = None,
    scorers: Sequence[str] = SCORERS.default,
    methods: Sequence[str] | None = None,
    rank_by: str | None = None,
    annotations: str | None = None,
    weights: Literal["auto", "equal"] | Sequence[float] = "auto",
    n_folds: int = 5,
    n_seeds: int = 1,
    random_state: int | None = 0,
    top: int | None = None,
    threshold: float | None = None,
    model: str | None = None,
    pair_mode: Literal["features", "joint"] | None = None,
    cache_dir: str | Path | None = None,
    progress: bool | None = None,
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
    scorers : sequence of {"tfidf", "embed", "finetune"}
        The ensemble's members; the first is the single model behind ``loss``.
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
    model, pair_mode, cache_dir : options of the ``embed``/``finetune`` scorers.
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
    from labelaudit.detect import (
        annotation_matrix,
        confident_learning,
        crowdlab,
        ensemble_pred_probs,
        label_quality_scores,
    )
    from labelaudit.models import member_pred_probs

    started = time.perf_counter()
    if progress is None:
        progress = default_progress()
    if methods is None:
        methods = [m for m in DEFAULT_METHODS if m != "crowdlab" or annotations is not None]
    if rank_by is None:
        rank_by = "crowdlab" if annotations is not None else DEFAULT_METHOD
    _check_options(methods, rank_by, top, threshold, n_seeds, annotations)
    if not scorers:
        raise InvalidParameterError("give at least one scorer")
    _check_weights(weights, scorers)
    scored_frame = train_frame = _as_frame(data)
    train = prepare_text_dataset(train_frame, text=text, label=label, text_pair=text_pair,
                                 id=id_column(train_frame, id))
    target = None
    if score is not None:
        scored_frame = _as_frame(score)
        target = prepare_text_dataset(scored_frame, text=text, label=label,
                                      text_pair=text_pair, id=id_column(scored_frame, id),
                                      classes=train.classes, min_classes=1)
    scored = target if target is not None else train
    assert scored.labels is not None
    crowd_votes = None
    if annotations is not None:  # checked before any model work
        require_columns(scored_frame, [annotations])
        crowd_votes = annotation_matrix(scored_frame[annotations], train.classes, scored.ids)
    run = member_pred_probs(train, target, scorers=list(scorers), n_folds=n_folds,
                            n_seeds=n_seeds, random_state=random_state, progress=progress,
                            model=model, pair_mode=pair_mode, cache_dir=cache_dir)
    members = run.probs
    # Repeats of one scorer (--seeds) are averaged first; the weights and temperatures are
    # then fitted per scorer, not per repeat.
    scorer_probs = run.per_scorer()
    ensemble = ensemble_pred_probs(list(scorer_probs.values()), scored.labels, weights=weights)
    pred_probs = ensemble.pred_probs
    wanted = list(dict.fromkeys([*methods, rank_by]))
    scores: dict[str, np.ndarray] = {}
    cl = confident_learning(scored.labels, pred_probs)
    crowd = None if crowd_votes is None else crowdlab(scored.labels, pred_probs, crowd_votes)
    for method in wanted:
        if method == "loss":
            scores[method] = label_quality_scores(scored.labels, next(iter(members.values())))
        elif method == "ensemble":
            scores[method] = label_quality_scores(scored.labels, pred_probs, method="loss")
        elif method == "confident_learning":
            scores[method] = cl.scores
        elif method == "crowdlab":
            assert crowd is not None
            scores[method] = crowd.scores
        else:
            scores[method] = label_quality_scores(scored.labels, pred_probs,
                                                  method=method)  # type: ignore[arg-type]
    _warn_if_chance_level(scored.labels, pred_probs)
    order = np.argsort(scores[rank_by], kind="stable")
    flagged = np.zeros(len(scored), dtype=bool)
    if threshold is not None:
        flagged = pred_probs[np.arange(len(scored)), scored.labels] < threshold
        rule = f"given-label probability < {threshold}"
    else:
        count = cl.n_issues if top is None else min(top, len(scored))
        flagged[order[:count]] = True
        rule = f"top {count}" + (" (cleanlab's estimated count)" if top is None else "")
    return ScanResult(
        ids=scored.ids, texts=scored.texts, text_pairs=scored.text_pairs, labels=scored.labels,
        classes=train.classes, pred_probs=pred_probs, member_probs=members,
        weights=dict(zip(scorer_probs, ensemble.weights.tolist(), strict=True)),
        temperatures=dict(zip(scorer_probs, ensemble.temperatures.tolist(), strict=True)),
        scores=scores, rank_by=rank_by,
        flagged=flagged, flag_rule=rule, n_issues_estimate=cl.n_issues,
        seconds=time.perf_counter() - started,
        consensus_labels=None if crowd is None else crowd.consensus_labels,
        mode=("fit-on-train, score-on-test" if target is not None
              else f"{run.n_folds}-fold cross-fit"),
    )
