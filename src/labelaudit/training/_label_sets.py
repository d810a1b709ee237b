"""``train`` on multi-label data: one sigmoid per class with binary cross-entropy
(``base``), and ``filter`` (a cross-fitted multi-label scan flags the items whose label set
looks wrong; they are dropped, or given their suggested set, before ``base``)."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import numpy as np

from labelaudit._errors import InvalidInputError, InvalidParameterError
from labelaudit.io import SET_THRESHOLD
from labelaudit.training._methods._base import Method

if TYPE_CHECKING:
    import pandas as pd
    import torch

    from labelaudit.models import Step

__all__ = ["LABEL_SET_METHODS", "MultiLabelBase", "check_label_set_method", "train_label_sets"]

# The training methods that take label sets.
LABEL_SET_METHODS = ("base", "filter")


class MultiLabelBase(Method):
    r"""Binary cross-entropy of one sigmoid per class against the given label sets.

    .. math:: \mathcal{L} = -\frac{1}{bk} \sum_{i, j} y_{ij} \log \sigma(z_{ij})
       + (1 - y_{ij}) \log (1 - \sigma(z_{ij}))

    Examples
    --------
    >>> MultiLabelBase(np.array([[1, 0], [0, 1]])).name
    'base'
    """

    name = "base"

    def __init__(self, label_sets: np.ndarray) -> None:
        self.label_sets = np.asarray(label_sets, dtype=np.float32)
        self._on: Any = None

    def loss(self, step: Step) -> torch.Tensor:
        import torch
        import torch.nn.functional as F

        logits = step.logits(0)
        if self._on is None or self._on.device != logits.device:
            self._on = torch.as_tensor(self.label_sets, device=logits.device)
        return F.binary_cross_entropy_with_logits(logits.float(), self._on[step.index])


def check_label_set_method(method: str) -> None:
    """Refuse a method that does not train on label sets, naming those that do."""
    if method not in LABEL_SET_METHODS:
        takes = ("screens methods that take" if method == "auto" else "takes")
        raise InvalidParameterError(
            f"the label column holds label sets (multi-label), and method {method!r} {takes} "
            f"one label per item; for label sets: {' or '.join(LABEL_SET_METHODS)}")


def train_label_sets(frame: pd.DataFrame, *, text: str, label: str, text_pair: str | None,
                     label_sep: str | None, method: str, filter_mode: str | None,
                     backbone: str, settings: dict[str, Any], config: Any,
                     random_state: int, progress: bool) -> Any:
    """A multi-label :class:`TrainedModel` (``settings["multi_label"]``: its probabilities
    are per-class sigmoids); called by :func:`labelaudit.train` for a column of label sets."""
    from labelaudit.io import check_label_set_classes, prepare_text_dataset, read_label_sets
    from labelaudit.models import EmbeddingInputs, TextInputs, train_networks
    from labelaudit.training._backbones import embed, network_factory
    from labelaudit.training._model import TrainedModel

    started = time.perf_counter()
    check_label_set_method(method)
    base = prepare_text_dataset(frame, text=text, label=None, text_pair=text_pair)
    label_sets, classes = read_label_sets(frame[label], column=label, ids=base.ids,
                                          sep=label_sep)
    if len(classes) < 2:
        raise InvalidInputError(f"column {label!r} has {len(classes)} class in its label sets; "
                                "at least 2 are needed (one class is binary classification)")
    check_label_set_classes(label_sets, classes)
    log: dict[str, Any] = {"n_train": len(base), "random_state": random_state,
                           "multi_label": True}
    keep = np.arange(len(base))
    if method == "filter":
        from labelaudit.scanning import scan_label_sets

        scanned = scan_label_sets(frame, text=text, label=label, text_pair=text_pair,
                                  label_sep=label_sep, classes=list(classes),
                                  random_state=random_state, keep_columns=False,
                                  progress=progress)
        flagged = np.asarray(scanned.flagged)
        if (filter_mode or "drop") == "drop":
            keep = np.flatnonzero(~flagged)
        else:
            label_sets = np.where(flagged[:, None], scanned.suggested_sets, label_sets)
        log.update(filter=filter_mode or "drop", flagged=int(flagged.sum()),
                   filter_scorers=list(scanned.member_probs), filter_rule=scanned.flag_rule)
    settings = dict(settings, multi_label=True)
    from labelaudit.io import TextDataset

    dataset = TextDataset(base.ids, base.texts, base.text_pairs, label_sets, classes)
    if backbone == "head":
        vectors = embed(dataset, settings, progress=progress)
        settings["dim"] = int(vectors.shape[1])
        inputs: Any = EmbeddingInputs(vectors[keep])
    else:
        inputs = TextInputs.from_dataset(dataset, settings).subset(keep)
    placeholder = np.zeros(len(keep), dtype=np.int64)  # the loop's labels; the sets are the
    networks, training = train_networks(  # targets of MultiLabelBase's loss
        network_factory(settings, len(classes)), inputs, placeholder, len(classes),
        MultiLabelBase(label_sets[keep]), config)
    log.update(n_used=int(len(keep)), epochs=config.epochs,
               learning_rate=config.learning_rate, batch_size=config.batch_size,
               losses=list(training.losses), seconds=time.perf_counter() - started)
    return TrainedModel(classes=np.asarray(classes).astype(str).astype(object), method=method,
                        backbone=backbone, network=networks[0], settings=settings, log=log)


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
