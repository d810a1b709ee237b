"""SEAL: retrain on the average of the previous network's predictions over epochs."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from labelaudit._errors import InvalidParameterError
from labelaudit._validation import check_int
from labelaudit.models import Method, predict_proba, resolve_device

if TYPE_CHECKING:
    import torch

    from labelaudit.models import Inputs, LoopConfig, Network, Step


class SEAL(Method):
    r"""Self-evolution average of labels, SEAL (Chen et al., "Beyond Class-Conditional
    Assumption: A Primary Attempt to Combat Instance-Dependent Label Noise", AAAI 2021).

    Round 0 trains on the given labels (or on ``soft_targets``, rows summing to 1, as
    ``filter-relabel`` gives); the round's soft label is the mean of the network's softmax on
    every training item at the end of its epochs :math:`t = 1..T`, and the next round trains a
    fresh network against it:

    .. math:: \bar S_i = \frac{1}{T} \sum_{t=1}^{T} S^{t}_i, \qquad
              \mathcal{L} = -\frac{1}{b}\sum_i \sum_k \bar S_{ik} \log p_k(x_i),

    so wrong labels, fitted only late, spread mass onto the class the features suggest.
    ``n_rounds`` counts every round (NoisywikiHow's "number of iterations = 4", Tables 9 and 11).
    Records ``soft_labels`` per round and, with ``record_predictions``, ``epoch_predictions``.
    """

    name = "seal"

    def __init__(self, *, n_rounds: int = 4, soft_targets: np.ndarray | None = None,
                 record_predictions: bool = False) -> None:
        self.n_rounds = check_int(n_rounds, "n_rounds", minimum=1)
        self.soft_targets = None
        if soft_targets is not None:
            targets = np.asarray(soft_targets, dtype=np.float64)
            if targets.ndim != 2 or not np.all(np.isfinite(targets)) or (targets < 0).any() \
                    or not np.allclose(targets.sum(axis=1), 1.0, atol=1e-4):
                raise InvalidParameterError("soft_targets must be a 2-d array of rows of "
                                            "non-negative numbers that sum to 1")
            self.soft_targets = targets
        self.record_predictions = bool(record_predictions)
        self.soft_labels: list[np.ndarray] = []
        self.epoch_predictions: list[list[np.ndarray]] = []
        self._sum: np.ndarray | None = None
        self._count = 0
        self._target: torch.Tensor | None = None

    def rounds(self) -> int:
        return self.n_rounds

    def start(self, labels: np.ndarray, n_classes: int, config: LoopConfig,
              round_index: int) -> None:
        import torch

        if round_index == 0:
            self.soft_labels, self.epoch_predictions = [], []
        self._sum = np.zeros((len(labels), n_classes), dtype=np.float64)
        self._count = 0
        if self.record_predictions:
            self.epoch_predictions.append([])
        self._target = None
        if round_index == 0 and self.soft_targets is not None:
            if self.soft_targets.shape != (len(labels), n_classes):
                raise InvalidParameterError(
                    f"soft_targets has shape {self.soft_targets.shape}; the training items "
                    f"need ({len(labels)}, {n_classes})")
            self._target = torch.as_tensor(self.soft_targets, dtype=torch.float32,
                                           device=resolve_device(config.device))
        elif round_index > 0:
            self._target = torch.as_tensor(self.soft_labels[round_index - 1],
                                           dtype=torch.float32,
                                           device=resolve_device(config.device))

    def loss(self, step: Step) -> torch.Tensor:
        import torch
        import torch.nn.functional as F

        logits = step.logits(0).float()
        if self._target is None:
            return F.cross_entropy(logits, step.targets)
        soft = self._target[torch.as_tensor(step.index, device=self._target.device)]
        return -(soft.to(logits.device) * F.log_softmax(logits, dim=1)).sum(dim=1).mean()

    def end_epoch(self, epoch: int, networks: Sequence[Network], inputs: Inputs,
                  labels: np.ndarray) -> None:
        assert self._sum is not None
        probs = predict_proba(networks[0], inputs)
        self._sum += probs
        self._count += 1
        if self.record_predictions:
            self.epoch_predictions[-1].append(probs)

    def end_round(self, networks: Sequence[Network], inputs: Inputs,
                  labels: np.ndarray) -> None:
        assert self._sum is not None
        self.soft_labels.append(self._sum / max(self._count, 1))

    def records(self) -> dict[str, Any]:
        out: dict[str, Any] = {"soft_labels": list(self.soft_labels)}
        if self.record_predictions:
            out["epoch_predictions"] = [list(r) for r in self.epoch_predictions]
        return out

    def __repr__(self) -> str:
        return f"SEAL(n_rounds={self.n_rounds})"
