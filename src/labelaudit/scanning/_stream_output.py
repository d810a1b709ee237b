"""Scores from out-of-sample probabilities, and the output rows of one chunk of the input.

The columns and values are those of :meth:`labelaudit.scanning.ScanResult.to_frame`:
``id, text, [text_pair,] label, suggested_label, suggested_prob, given_prob, loss, rank,
score_<method>..., flagged``, then the input's other columns.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from labelaudit.engine import Columns
from labelaudit.scanning._text_result import input_names

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["MEMBER", "METHODS", "Scores", "output_frame",
           "score_probs"]

MEMBER = "tfidf"  # the member name behind ``score_loss_<member>``
# scan's default methods without annotations, ``rank_by`` last
METHODS: tuple[str, ...] = ("loss", "ensemble", "margin", "entropy", "max_prob",
                            "confident_learning")
RANK_BY = "ensemble"


@dataclass(frozen=True)
class Scores:
    """Everything the output needs besides the input's own columns, for every item.

    Attributes
    ----------
    pred_probs : ndarray (n_samples, n_classes)
        The calibrated ensemble of the members (as ``scan`` makes it).
    member_probs : dict of str to ndarray (n_samples, n_classes)
        Each member's raw out-of-sample probabilities; the first is behind ``loss``.
    weights, temperatures : dict of str to float
    scores : dict of str to ndarray (n_samples,)
    rank : ndarray of int (n_samples,)
        1 = most suspect (by ``ensemble``, stable for ties).
    flagged : ndarray of bool (n_samples,)
    flag_rule : str
    n_issues_estimate : int
    accuracy : float
        Out-of-sample accuracy of ``pred_probs`` against the given labels.
    majority_rate : float
        The accuracy of always predicting the most common given label.
    """

    pred_probs: np.ndarray
    member_probs: dict[str, np.ndarray]
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
    from labelaudit.detect import ensemble_pred_probs
    from labelaudit.scanning._rank import flag_items, method_scores
    from labelaudit.scanning._text_result import _accuracy, _majority_rate

    names = list(member_probs)
    ensemble = ensemble_pred_probs([member_probs[n] for n in names], labels, weights="auto")
    probs = ensemble.pred_probs
    # one process: cleanlab's pool forks, which can hang under Ray's threads
    scores, n_issues, _ = method_scores(labels, probs, member_probs[names[0]], None,
                                         list(METHODS), n_jobs=1)
    order = np.argsort(scores[RANK_BY], kind="stable")
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(1, len(order) + 1)
    flagged, rule = flag_items(labels, probs, scores[RANK_BY], n_issues, top=top,
                               threshold=threshold)
    return Scores(probs, dict(member_probs),
                  dict(zip(names, ensemble.weights.tolist(), strict=True)),
                  dict(zip(names, ensemble.temperatures.tolist(), strict=True)), scores,
                  rank, flagged, rule, n_issues, _accuracy(labels, probs),
                  _majority_rate(labels))


def extra_columns(names: Sequence[str], columns: Columns) -> list[str]:
    """The input's columns a scan does not read, in input order."""
    used = {c for c in (columns.text, columns.text_pair, columns.label, columns.id) if c}
    return [n for n in names if n not in used]


def output_names(extras: Sequence[str], first: str = MEMBER) -> dict[str, str]:
    """The output name of each extra column: ``input_<name>`` where it would clash with a
    labelaudit column (as :meth:`ScanResult.to_frame` renames it); ``first`` is the
    member behind ``score_loss_<first>``."""
    taken = ["id", "text", "label", "suggested_label", "suggested_prob", "given_prob", "loss",
             "rank", "flagged", *(f"score_{m}" for m in METHODS), f"score_loss_{first}"]
    return dict(zip(extras, map(str, input_names(list(extras), taken)), strict=True))


def output_frame(frame: pd.DataFrame, rows: np.ndarray, *, columns: Columns,
                 labels: np.ndarray, classes: np.ndarray, scores: Scores,
                 extras: dict[str, str] | None) -> pd.DataFrame:
    """The output rows of one input chunk (``rows``: their positions in the input), in
    input order; ``extras`` maps the kept input columns to their output names."""
    import pandas as pd

    from labelaudit.detect import per_item_loss, suggest_labels

    probs = scores.pred_probs[rows]
    given = labels[rows]
    suggested, suggested_prob = suggest_labels(given, probs)
    out: dict[str, Any] = {
        "id": frame[columns.id].to_numpy() if columns.id else rows,
        "text": _text(frame[columns.text]),
    }
    if columns.text_pair:
        out["text_pair"] = _text(frame[columns.text_pair])
    out.update(label=classes[given], suggested_label=classes[suggested],
               suggested_prob=suggested_prob, given_prob=probs[np.arange(len(rows)), given],
               loss=per_item_loss(given, probs), rank=scores.rank[rows])
    for method, values in scores.scores.items():
        out[f"score_loss_{scores.first}" if method == "loss" else f"score_{method}"] = \
            values[rows]
    out["flagged"] = scores.flagged[rows]
    result = pd.DataFrame(out)
    if extras:
        kept = frame[list(extras)].reset_index(drop=True)
        kept.columns = pd.Index(list(extras.values()))
        result = pd.concat([result, kept], axis=1)
    return result


def _text(values: pd.Series) -> list[str]:
    return values.astype(str).tolist()
