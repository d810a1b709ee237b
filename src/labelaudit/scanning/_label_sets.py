"""The scan of multi-label data: every member cross-fitted one-vs-rest on folds stratified by
label sets, the items ranked by how likely their given label set is, and the classes that
look missing or wrong named."""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from labelaudit._errors import InvalidInputError, InvalidParameterError
from labelaudit._validation import check_choice, check_int
from labelaudit.io import (
    TextDataset,
    check_label_set_classes,
    pred_probs_by_id,
    prepare_text_dataset,
    read_label_sets,
    read_pred_probs,
    require_columns,
)
from labelaudit.models import (
    OneVsRestScorer,
    Scorer,
    crossfit_pred_probs,
    default_progress,
    label_set_folds,
    make_scorer,
)
from labelaudit.scanning._options import ScanOptions, check_flagging, id_column
from labelaudit.scanning._pipeline import extra_columns
from labelaudit.scanning._results import LabelSetScanResult

if TYPE_CHECKING:
    import pandas as pd

# The members that score label sets (a one-vs-rest head on each one's features).
LABEL_SET_SCORERS: tuple[str, ...] = ("tfidf", "tfidf-char", "embed")
# What a multi-label scan takes, for the line that refuses single-label options.
MULTI_LABEL_SCAN_TAKES = ("a multi-label scan takes the columns, label_sep, classes, scorers "
                          f"({', '.join(LABEL_SET_SCORERS)}), rank_by, n_folds, top, "
                          "threshold, pred_probs, model and cache_dir")

_DEFAULT_METHOD = "worst_class"
_DEFAULT_SCORERS = ("tfidf-char",)
_EPS = 1e-6


def _cleanlab_scores(label_sets: np.ndarray, pred_probs: np.ndarray,
                     like: np.ndarray) -> np.ndarray:
    from cleanlab.multilabel_classification import get_label_quality_scores

    return get_label_quality_scores(_label_lists(label_sets), np.clip(pred_probs, _EPS, 1 - _EPS))


#: The label-set quality scores by name (a multi-label scan's ``rank_by``), each one's
#: function of the label sets, the probabilities and the probability of each given
#: membership (see :func:`label_set_scores`; benchmarks/multilabel_detection.py).
LABEL_SET_METHODS: dict[str, Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]] = {
    "log_likelihood": lambda sets, probs, like: np.exp(np.log(like).mean(axis=1)),
    "worst_class": lambda sets, probs, like: like.min(axis=1),
    "cleanlab": _cleanlab_scores,
}


def label_set_scores(label_sets: np.ndarray, pred_probs: np.ndarray,
                     methods: Sequence[str] | None = None) -> dict[str, np.ndarray]:
    """How likely each item's given label set is under per-class probabilities, by each of
    ``methods`` (None: every :data:`LABEL_SET_METHODS`); lower = more suspect.

    ``log_likelihood``: the geometric mean over classes of the probability of the given
    membership (``p`` where the item has the class, ``1 - p`` where not), in (0, 1];
    ``worst_class``: the lowest of those; ``cleanlab``: cleanlab's multi-label
    ``get_label_quality_scores`` (self-confidence per class, exponential moving average).

    Examples
    --------
    >>> Y = np.array([[1, 0], [1, 0]])
    >>> P = np.array([[0.9, 0.1], [0.2, 0.8]])
    >>> {k: v.round(2).tolist() for k, v in label_set_scores(Y, P, ["worst_class"]).items()}
    {'worst_class': [0.9, 0.2]}
    """
    like = np.clip(np.where(label_sets == 1, pred_probs, 1.0 - pred_probs), _EPS, 1.0)
    return {m: LABEL_SET_METHODS[check_choice(m, "methods", LABEL_SET_METHODS)](
        label_sets, pred_probs, like) for m in (LABEL_SET_METHODS if methods is None else methods)}


def _label_lists(label_sets: np.ndarray) -> list[list[int]]:
    return [np.flatnonzero(row).tolist() for row in label_sets]


def _estimate_issues(label_sets: np.ndarray, pred_probs: np.ndarray) -> int:
    """cleanlab's estimate of the number of items with a wrong label set."""
    from cleanlab.filter import find_label_issues

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        found = find_label_issues(labels=_label_lists(label_sets),
                                  pred_probs=np.clip(pred_probs, _EPS, 1 - _EPS),
                                  multi_label=True, n_jobs=1)  # no fork: see confident_learning
    return int(np.sum(found))


def _check_classes(label_sets: np.ndarray, classes: np.ndarray, n_folds: int | None) -> None:
    """Some item has a label; when cross-fitting, every class is on two items or more (one
    item's class cannot be learned out of sample) and each fold has two items or more."""
    if len(classes) < 1:
        raise InvalidInputError("no item has a label: the label sets are all empty")
    if n_folds is None:  # the user's probabilities: nothing is fitted
        return
    check_label_set_classes(label_sets, classes)
    if len(label_sets) < 2 * n_folds:
        raise InvalidInputError(f"{len(label_sets)} items are too few for {n_folds} folds")


def _given_probs(pred_probs: Any, classes: np.ndarray, ids: np.ndarray,
                 id_name: str | None) -> np.ndarray:
    """The user's per-class probabilities in [0, 1]: an array or ``.npy`` file in ``classes``
    order, or a table with one column per class (rows matched by ``id_name`` if it has it)."""
    import pandas as pd

    given = read_pred_probs(pred_probs) if isinstance(pred_probs, (str, Path)) else pred_probs
    if isinstance(given, pd.DataFrame) and id_name is not None and id_name in given.columns:
        given = pred_probs_by_id(given, ids, id_name)
    if isinstance(given, pd.DataFrame):
        names = [str(c) for c in given.columns]
        absent = [str(c) for c in classes if str(c) not in names]
        if absent:
            raise InvalidInputError(f"pred_probs has no column for the classes {absent[:10]}")
        given = given.rename(columns=str)[[str(c) for c in classes]]
    probs = np.asarray(given, dtype=float)
    shape = (len(probs), len(classes)) if probs.ndim == 2 else (-1, len(classes))
    if probs.shape != shape:
        raise InvalidInputError(f"pred_probs has shape {probs.shape}; the label sets need "
                                f"(items, {len(classes)}): one column per class")
    if not np.isfinite(probs).all() or probs.min() < 0 or probs.max() > 1:
        raise InvalidInputError("pred_probs must be probabilities in [0, 1], one per class "
                                "(sigmoid outputs, not logits)")
    return probs


def _member(name: Any, *, model: str | None, cache_dir: str | Path | None) -> Any:
    """A member's one-vs-rest form: from its name, or from a configured scorer."""
    return OneVsRestScorer(name if isinstance(name, Scorer) else make_scorer(
        name, **({"model": model, "cache_dir": cache_dir} if name == "embed" else {})))


def scan_label_sets(frame: pd.DataFrame, options: ScanOptions) -> LabelSetScanResult:
    """:func:`labelaudit.scan` on label sets (the members' per-class probabilities, or
    ``pred_probs``, averaged); ``top``, ``threshold`` or cleanlab's estimate flags."""
    text, label, text_pair, top, threshold = (options.text, options.label, options.text_pair,
                                              options.top, options.threshold)
    scorers, pred_probs, label_sep = options.scorers, options.pred_probs, options.label_sep
    n_folds = 5 if options.n_folds is None else options.n_folds
    progress = default_progress() if options.progress is None else options.progress
    started = time.perf_counter()
    rank_by = check_choice(options.rank_by or _DEFAULT_METHOD, "rank_by", LABEL_SET_METHODS)
    check_int(n_folds, "n_folds", minimum=2)
    names = list(scorers) if scorers is not None else list(_DEFAULT_SCORERS)
    bad = [getattr(n, "name", n) for n in names if getattr(n, "name", n) not in LABEL_SET_SCORERS]
    if bad or not names:
        raise InvalidParameterError(
            f"scorers {bad or names} do not score label sets; multi-label scans take "
            f"{', '.join(LABEL_SET_SCORERS)}", param="scorers")
    check_flagging(top, threshold)
    require_columns(frame, [label])
    id_name = id_column(frame, options.id)
    base = prepare_text_dataset(frame, text=text, label=None, text_pair=text_pair, id=id_name)
    label_sets, found = read_label_sets(frame[label], column=label, ids=base.ids,
                                        sep=label_sep, classes=options.classes)
    _check_classes(label_sets, found, n_folds if pred_probs is None else None)
    data = TextDataset(base.ids, base.texts, base.text_pairs, label_sets, found)
    if pred_probs is not None:
        if scorers is not None:
            raise InvalidParameterError("pred_probs replaces the members: give pred_probs or "
                                        "scorers, not both", param=("scorers", "pred_probs"))
        member_probs = {"pred_probs": _given_probs(pred_probs, found, data.ids, id_name)}
        if len(member_probs["pred_probs"]) != len(label_sets):
            raise InvalidInputError(f"pred_probs has {len(member_probs['pred_probs'])} rows "
                                    f"for {len(label_sets)} items")
    else:
        folds = label_set_folds(label_sets, n_folds=n_folds, random_state=options.random_state)
        member_probs = {}
        for name in names:
            scorer = _member(name, model=options.first_model, cache_dir=options.cache_dir)
            features = scorer.prepare(data, progress=progress)
            member_probs[scorer.name] = crossfit_pred_probs(scorer, features, label_sets, folds,
                                                     n_classes=len(found), progress=progress)
    probs = np.mean(list(member_probs.values()), axis=0)
    scores = label_set_scores(label_sets, probs)
    n_issues = _estimate_issues(label_sets, probs)
    order = np.argsort(scores[rank_by], kind="stable")
    flagged = np.zeros(len(order), dtype=bool)
    if threshold is not None:
        flagged = scores[rank_by] < threshold
        rule = f"{rank_by} below {threshold}"
    else:
        count = n_issues if top is None else min(int(top), len(order))
        flagged[order[:count]] = True
        rule = "cleanlab's estimate of the wrong sets" if top is None else f"the top {count}"
    return LabelSetScanResult(
        ids=data.ids, texts=list(data.texts), text_pairs=data.text_pairs,
        label_sets=label_sets, classes=found, pred_probs=probs, member_probs=member_probs,
        scores=scores, rank_by=rank_by, flagged=flagged, flag_rule=rule,
        n_issues_estimate=n_issues, seconds=time.perf_counter() - started,
        label_sep=label_sep,
        extra=extra_columns(frame, [text, text_pair, label, id_name]) if options.keep_columns
        else None)
