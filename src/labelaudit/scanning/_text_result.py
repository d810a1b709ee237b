"""The result of a text scan: out-of-sample probabilities and every method's scores."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from labelaudit._errors import LabelAuditWarning
from labelaudit.io import ResultFiles

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from labelaudit.models import TrainingDynamics

__all__ = ["GIVEN_PROBS", "OUTPUT_COLUMNS", "ChanceLevelWarning", "ScanResult", "ScannedTexts",
           "warn_if_chance_level"]

# ``ScanResult.mode`` when the user gave the probabilities (``pred_probs=``).
GIVEN_PROBS = "given pred_probs"
# Columns ``to_frame`` writes (besides ``score_*``); a kept input column of one of these
# names, or starting with ``score_``, is renamed ``input_<name>``.
OUTPUT_COLUMNS = ("id", "text", "text_pair", "label", "suggested_label", "suggested_prob",
                  "given_prob", "loss", "rank", "consensus_label", "flagged")


class ChanceLevelWarning(LabelAuditWarning):
    """The scorers predict no better than always guessing the most common class."""


@dataclass(frozen=True)
class ScannedTexts:
    """What every text scan has: the items (ids, texts and, for sentence pairs, second
    texts), each method's score (lower = more suspect), the method that orders them, the
    flagged items and why, cleanlab's estimate of the number of errors, and the time."""

    ids: np.ndarray
    texts: list[str]
    text_pairs: list[str] | None
    scores: dict[str, np.ndarray]
    rank_by: str
    flagged: np.ndarray
    flag_rule: str
    n_issues_estimate: int
    seconds: float


@dataclass(frozen=True)
class ScanResult(ScannedTexts, ResultFiles):
    """The outcome of :func:`scan`: out-of-sample probabilities and every method's scores.

    Attributes
    ----------
    ids, texts, text_pairs : the scored items (``text_pairs`` None for single texts).
    labels : ndarray of int, shape (n_samples,)
        Given labels as indices into ``classes``.
    classes : ndarray of shape (n_classes,)
        The user's label values.
    pred_probs : ndarray of shape (n_samples, n_classes)
        Out-of-sample probabilities of the ensemble of all members, or the user's own
        (``mode`` is :data:`GIVEN_PROBS`).
    member_probs : dict of str to ndarray (n_samples, n_classes)
        Each member's out-of-sample probabilities (scorer name, ``#seed`` for repeats;
        ``pred_probs`` for the user's own).
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
    member_seconds : dict of str to float
        Wall time of each member (encoding and every fold), shown in the summary next to
        its weight, so a user sees where the time went.
    screened : dict of str to float
        Default members skipped after the screen, with their ensemble weight there.
    mode : str
        How the probabilities were made: ``"5-fold cross-fit"``, ``"fit-on-train,
        score-on-test"``, or :data:`GIVEN_PROBS` (the user's ``pred_probs``).
    extra : DataFrame or None
        The input's other columns (all but text, text pair, label, id and annotations),
        row ``i`` for item ``i``; :meth:`to_frame` writes them last. None when they were
        not kept (``keep_columns=False``) or there were none.
    datalab : DatalabIssues or None
        cleanlab Datalab's near-duplicate, outlier and non-IID findings (``datalab=True``);
        :meth:`to_frame` writes their columns after ``flagged``.
    dynamics : TrainingDynamics or None
        The held-out training dynamics of the ``dynamics`` member (its AUM, data-map
        confidence and variability per item, over its epochs and repeats), when it ran;
        :meth:`to_frame` writes them as ``dynamics_aum``, ``dynamics_confidence`` and
        ``dynamics_variability``.
    """

    labels: np.ndarray
    classes: np.ndarray
    pred_probs: np.ndarray
    member_probs: dict[str, np.ndarray]
    weights: dict[str, float]
    temperatures: dict[str, float]
    mode: str = field(default="cross-fit")
    consensus_labels: np.ndarray | None = None
    member_seconds: dict[str, float] = field(default_factory=dict)
    screened: dict[str, float] = field(default_factory=dict)
    extra: pd.DataFrame | None = None
    datalab: Any = None
    dynamics: TrainingDynamics | None = None

    @property
    def accuracy(self) -> float:
        """Out-of-sample accuracy of ``pred_probs`` against the given labels."""
        return _accuracy(self.labels, self.pred_probs)

    @property
    def majority_rate(self) -> float:
        """The accuracy of always predicting the most common given label."""
        return _majority_rate(self.labels)

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
        return len(self.labels) > 0 and _near_chance(self.accuracy, self.majority_rate)

    def to_table(self, n_rows: int = 20) -> pd.DataFrame:
        """The ``n_rows`` most suspect items of :meth:`to_frame` with the columns a person
        reads first: ``rank, id, label, suggested_label, suggested_prob, loss, flagged, text``."""
        return self.to_frame().head(n_rows)[["rank", "id", "label", "suggested_label",
                                             "suggested_prob", "loss", "flagged", "text"]]

    def to_frame(self) -> pd.DataFrame:
        """One row per item, most suspect first.

        Columns: ``id, text, [text_pair,] label, suggested_label, suggested_prob,
        given_prob, loss, rank, score_<method>..., flagged``; labels use the user's values.
        Every ``score_*`` is a label-quality score, lower = more suspect. ``loss`` is the
        ensemble's ``-log p(label)``; the ``loss`` method (the first scorer alone, FML) is
        written as ``score_loss_<scorer>``. After ``flagged`` come the Datalab columns and,
        when the ``dynamics`` member ran, ``dynamics_aum, dynamics_confidence,
        dynamics_variability`` (:attr:`dynamics`). ``score_crowdlab`` is CROWDLAB's consensus
        quality score (in [0, 1]) where the consensus equals the given label and that
        score minus 2 (in [-2, -1]) where it does not, so those items rank first.

        The input's other columns (:attr:`extra`) follow, unchanged; one named like a
        labelaudit column (:data:`OUTPUT_COLUMNS`) or starting with ``score_`` (which
        ``evaluate`` and ``review`` read as scores) is renamed ``input_<name>``.
        """
        import pandas as pd

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
        if self.datalab is not None:
            frame = pd.concat([frame, self.datalab.to_frame()], axis=1)
        if self.dynamics is not None:
            frame = pd.concat([frame, self.dynamics.to_frame().add_prefix("dynamics_")], axis=1)
        if self.extra is not None and len(self.extra.columns):
            frame = pd.concat([frame, _renamed(self.extra, frame.columns)], axis=1)
        return frame.iloc[order].reset_index(drop=True)

    def report(self, path: str | Path, **options: Any) -> Path:
        """Write the self-contained HTML audit report of this scan to ``path``; options as
        :func:`labelaudit.report.write_report` (``truth=``, ``annotations=``, ``top=``...)."""
        # the one upward import of scan: the report sits above it and reads this result
        from labelaudit.report import write_report

        return write_report(self, path, **options)

    def summary(self) -> str:
        """A few lines for a person: items, classes, estimated errors, accuracy, time (the
        format every scan prints, see :func:`format_scan_summary`)."""
        from labelaudit.scanning._summary import ScanFacts, format_scan_summary

        given = self.mode == GIVEN_PROBS
        facts = ScanFacts(
            n_items=len(self.labels), n_classes=len(self.classes),
            n_issues_estimate=self.n_issues_estimate, n_flagged=int(self.flagged.sum()),
            flag_rule=self.flag_rule, rank_by=self.rank_by, accuracy=self.accuracy,
            majority_rate=self.majority_rate, given=given,
            how=GIVEN_PROBS if given else ", ".join(self.weights),
            mode="" if given else self.mode,
            weights={k: (v, self.temperatures.get(k), self.member_seconds.get(k))
                     for k, v in self.weights.items()},
            screened=self.screened, seconds=self.seconds,
            extra_lines=tuple(f"datalab: {line}" for line in self.datalab.summary()
                              .splitlines()) if self.datalab is not None else ())
        weak = chance_note(self.accuracy, self.majority_rate) if len(self.labels) else ""
        return format_scan_summary(facts, weak)


def input_names(columns: Sequence[object], taken: Iterable[object]) -> list[object]:
    """The output name of each kept input column: ``input_<name>`` (prefixed again as
    often as needed) where it is one of ``taken``, of :data:`OUTPUT_COLUMNS`, or starts
    with ``score_``, which ``evaluate`` and ``review`` read as scores.

    Examples
    --------
    >>> input_names(["label", "note", "score_x"], ["id", "label"])
    ['input_label', 'note', 'input_score_x']
    """
    reserved = {*map(str, taken), *OUTPUT_COLUMNS}
    names: list[object] = []
    for column in columns:
        name: object = column
        if str(name) in reserved or str(name).startswith("score_"):
            while str(name) in reserved or name in columns or name in names:
                name = f"input_{name}"
        names.append(name)
    return names


def _renamed(extra: pd.DataFrame, taken: pd.Index) -> pd.DataFrame:
    """The kept input columns, renamed ``input_<name>`` where they would clash."""
    import pandas as pd
    out = extra.reset_index(drop=True)
    out.columns = pd.Index(input_names(list(extra.columns), taken))
    return out


def chance_note(accuracy: float, majority: float) -> str:
    """The summary's line for probabilities near chance level ("" when they are not)."""
    if not _near_chance(accuracy, majority):
        return ""
    return (f"\n  the models are near chance level (accuracy {accuracy:.3f} vs "
            f"{majority:.3f} for always the most common class): many flags are the "
            "models' mistakes, not label errors")


def _accuracy(labels: np.ndarray, pred_probs: np.ndarray) -> float:
    return float((pred_probs.argmax(axis=1) == labels).mean())


def _majority_rate(labels: np.ndarray) -> float:
    return float(np.bincount(labels).max() / len(labels)) if len(labels) else 0.0


def _near_chance(accuracy: float, majority: float) -> bool:
    """Accuracy within 0.05 of always predicting the most common class."""
    return accuracy < majority + 0.05


def warn_if_chance_level(labels: np.ndarray, pred_probs: np.ndarray, *,
                         given: bool = False) -> None:
    """Warn when the probabilities predict the given labels no better than the most common
    class; ``given`` words it for the user's own ``pred_probs``."""
    import warnings

    if len(labels) == 0:
        return
    accuracy, majority = _accuracy(labels, pred_probs), _majority_rate(labels)
    if given and _near_chance(accuracy, majority):
        warnings.warn(
            f"the given pred_probs have accuracy {accuracy:.2f} against the labels, "
            f"{'barely above' if accuracy > majority else 'no better than'} always predicting "
            f"the most common class ({majority:.2f}): check that their columns are in the "
            "class order (classes=) and their rows in the order of the data; otherwise the "
            "ranking is close to random",
            ChanceLevelWarning, stacklevel=3,
        )
    elif _near_chance(accuracy, majority):
        warnings.warn(
            f"out-of-sample accuracy {accuracy:.2f} is "
            f"{'barely above' if accuracy > majority else 'no better than'} always predicting "
            f"the most common class ({majority:.2f}): the scorers have not learned this task, "
            "so the ranking is close to random and the estimated error count is unreliable; "
            "fit on a real training split with --score, or use a model that knows the task "
            "(--model)",
            ChanceLevelWarning, stacklevel=3,
        )
