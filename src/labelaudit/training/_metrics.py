"""How well a trained model does on a labelled table: top-1, top-5 and macro-F1; for label
sets subset accuracy, micro- and macro-F1 and the Hamming loss."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from labelaudit._errors import InvalidInputError, InvalidParameterError, format_rows
from labelaudit._html_table import mapping_frame, result_html
from labelaudit.engine import first_rows_hold_label_sets
from labelaudit.io import (
    SET_THRESHOLD,
    check_distinct_files,
    check_label_values,
    holds_label_sets,
    read_label_sets,
    require_columns,
    text_keys,
    warn_overlap,
)
from labelaudit.training._model import TrainedModel, read_frame

if TYPE_CHECKING:
    import pandas as pd


@dataclass(frozen=True)
class TrainMetrics:
    """A trained model on a clean evaluation set.

    ``unseen_labels`` are evaluation labels the model never saw in training: their items
    count as wrong, and are listed so that a user sees why.
    """

    top1: float
    top5: float
    macro_f1: float
    n_eval: int
    unseen_labels: tuple[str, ...]
    n_unseen: int
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"top1": self.top1, "top5": None if np.isnan(self.top5) else self.top5,
                "macro_f1": self.macro_f1, "n_eval": self.n_eval,
                "unseen_labels": list(self.unseen_labels), "n_unseen": self.n_unseen, **self.extra}

    def summary(self) -> str:
        if self.extra.get("multi_label"):
            return (f"subset accuracy {self.top1:.4f}  micro-F1 {self.extra['micro_f1']:.4f}  "
                    f"macro-F1 {self.macro_f1:.4f}  Hamming loss "
                    f"{self.extra['hamming_loss']:.4f} on {self.n_eval} items (label sets)")
        unseen = (f"; {self.n_unseen} items have labels the model never saw "
                  f"({', '.join(self.unseen_labels[:5])}), counted as wrong"
                  if self.n_unseen else "")
        return (f"top-1 {self.top1:.4f}  top-5 {self.top5:.4f}  macro-F1 {self.macro_f1:.4f} "
                f"on {self.n_eval} items{unseen}")

    def _repr_html_(self) -> str:
        """The metrics in a notebook, as one row."""
        return result_html(self, mapping_frame(self.to_dict()))


def read_eval_table(data: pd.DataFrame | str | Path, *, label: str = "label",
                    where: str = "the evaluation table", label_sets: bool = False,
                    training: str | Path | None = None, label_sep: str | None = None,
                    text: str = "text", text_pair: str | None = None) -> pd.DataFrame:
    """A labelled evaluation table, read and checked before any training (its label column
    there, plain values, none missing; label sets as they are with ``label_sets``). With
    ``training``, the training file: the table must be another file, with labels of the same
    kind, and is warned about when more than a tenth of its items are training items."""
    if training is not None:
        check_distinct_files([("data", training), ("eval=", data)], why=_HELD_OUT_WHY)
    frame = read_frame(data)
    if label not in frame.columns:
        raise InvalidInputError(f"{where} has no label column {label!r}; its columns are "
                                f"{list(map(str, frame.columns[:12]))}")
    if not (label_sets and holds_label_sets(frame[label])):
        check_label_values(frame[label], column=label, where=where)
        missing = frame[label].isna().to_numpy()
        if missing.any():
            raise InvalidInputError(f"{where} has no label in "
                                    f"{format_rows(np.flatnonzero(missing))}")
    if training is not None:  # sets on one side only: one line now, not after training
        sets = label_sep is not None or first_rows_hold_label_sets(training, label)
        if (label_sep is not None or holds_label_sets(frame[label])) != sets:
            raise InvalidParameterError(
                f"{where}: its {label!r} column holds "
                f"{'label sets' if not sets else 'one label per item'} and the training "
                f"data's {'label sets' if sets else 'one label per item'}: give both the same "
                "kind of labels")
        _warn_seen(read_frame(training), frame, text=text, text_pair=text_pair)
    return frame


_HELD_OUT_WHY = ("the model is trained on data and measured on eval=, so eval= needs items of "
                 "its own")


def _warn_seen(training: pd.DataFrame, evaluation: pd.DataFrame, *, text: str,
               text_pair: str | None) -> None:
    """Warn when many evaluation items (the same text and text pair) are training items."""
    columns = [text] if text_pair is None else [text, text_pair]
    if not all(c in t.columns for c in columns for t in (training, evaluation)):
        return  # training names the missing column

    def keys(frame: pd.DataFrame) -> list[tuple[str, ...]]:
        return list(zip(*(frame[c].astype(str) for c in columns), strict=True))

    warn_overlap(("training", keys(training)), ("evaluation", keys(evaluation)),
                 why="the model has seen them, so its accuracy on them flatters it; drop them "
                 "from the evaluation set")


def _evaluate_label_sets(model: TrainedModel, frame: pd.DataFrame, *, text: str | None,
                         label: str, text_pair: str | None, probs: np.ndarray | None,
                         label_sep: str | None) -> TrainMetrics:
    """A multi-label model on true label sets: subset accuracy as ``top1``, macro-F1, and
    micro-F1 and the Hamming loss in ``extra``."""
    require_columns(frame, [label])
    truth, _ = read_label_sets(frame[label], column=label, ids=np.arange(len(frame)),
                               sep=label_sep, classes=list(model.classes))
    if probs is None:
        probs = model.predict_proba(frame, text=text, text_pair=text_pair)
    metrics = label_set_metrics(truth, probs)
    return TrainMetrics(top1=metrics["subset_accuracy"], top5=float("nan"),
                        macro_f1=metrics["macro_f1"], n_eval=len(frame), unseen_labels=(),
                        n_unseen=0, extra={"multi_label": True, **metrics})


def evaluate_model(model: TrainedModel, data: pd.DataFrame | str | Path, *, text: str | None = None,
                   label: str = "label", text_pair: str | None = None,
                   probs: np.ndarray | None = None, label_sep: str | None = None) -> TrainMetrics:
    """Top-1 and top-5 accuracy and macro-F1 of ``model`` on a labelled table (``probs``:
    the model's probabilities of its rows, when already predicted); for a multi-label
    model, subset accuracy (as ``top1``), macro-F1, micro-F1 and the Hamming loss on the
    true label sets (lists, or text joined by ``label_sep``)."""
    import pandas as pd
    from sklearn.metrics import f1_score

    if model.multi_label:
        return _evaluate_label_sets(model, read_frame(data), text=text, label=label,
                                    text_pair=text_pair, probs=probs, label_sep=label_sep)
    frame = read_eval_table(data, label=label)
    truth = text_keys(frame[label])
    if probs is None:
        probs = model.predict_proba(frame, text=text, text_pair=text_pair)
    classes = np.asarray(model.classes, dtype=str)
    known = np.isin(truth, classes)
    position = pd.Index(classes).get_indexer(truth)
    k = min(5, probs.shape[1])
    top = np.argsort(-probs, axis=1, kind="stable")[:, :k]
    hit1 = known & (top[:, 0] == position)
    hit5 = known & (top == position[:, None]).any(axis=1)
    predicted = classes[top[:, 0]]
    return TrainMetrics(
        top1=float(hit1.mean()), top5=float(hit5.mean()),
        macro_f1=float(f1_score(truth, predicted, average="macro", zero_division=0)),
        n_eval=len(frame), unseen_labels=tuple(sorted(set(truth[~known]))),
        n_unseen=int((~known).sum()))


def label_set_metrics(truth: np.ndarray, probs: np.ndarray) -> dict[str, float]:
    """Subset accuracy (the whole set right), micro and macro F1 and the Hamming loss of
    the sets at probability 0.5.

    Examples
    --------
    >>> label_set_metrics(np.array([[1, 0], [1, 1]]), np.array([[0.9, 0.2], [0.8, 0.1]]))
    {'subset_accuracy': 0.5, 'micro_f1': 0.8, 'macro_f1': 0.5, 'hamming_loss': 0.25}
    """
    from sklearn.metrics import f1_score

    predicted = (probs >= SET_THRESHOLD).astype(int)
    return {"subset_accuracy": float((predicted == truth).all(axis=1).mean()),
            "micro_f1": float(f1_score(truth, predicted, average="micro", zero_division=0)),
            "macro_f1": float(f1_score(truth, predicted, average="macro", zero_division=0)),
            "hamming_loss": float((predicted != truth).mean())}
