"""Co-teaching: two networks pick each other's small-loss items."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from labelaudit._errors import InvalidParameterError
from labelaudit._validation import check_fraction, check_int
from labelaudit.models import Method

if TYPE_CHECKING:
    import torch

    from labelaudit.models import Inputs, LoopConfig, Network, Step


class CoTeaching(Method):
    r"""Co-teaching (Han et al., "Co-teaching: Robust Training of Deep Neural Networks with
    Extremely Noisy Labels", NeurIPS 2018): two networks see each batch; in epoch :math:`T` each
    keeps the :math:`R(T)` share of the batch with its smallest cross-entropy, and the *other*
    is updated on those items only (the paper's Algorithm 1):

    .. math:: \bar D_f = \arg\min_{D': |D'| \ge R(T)|\bar D|} \ell(f, D'), \quad
              w_g \leftarrow w_g - \eta \nabla \ell(g, \bar D_f), \quad
              R(T) = 1 - \min\{T \tau / T_k, \tau\}

    (and for :math:`g`), :math:`\tau` = ``noise_rate`` (required), ``t_k`` = :math:`T_k`, default
    8 (NoisywikiHow Table 9; 3 for synthetic noise, Table 11). :math:`T` counts from 0 (authors'
    code): epoch 0 uses every item; a batch keeps ``round((1 - forget_rate) * b)``, at least 1.
    Predictions use network 0. Records ``forget_rate`` and ``selected_fraction`` per epoch.

    Examples
    --------
    >>> method = CoTeaching(noise_rate=0.4, t_k=4)
    >>> [method.forget_rate(t) for t in range(6)]
    [0.0, 0.1, 0.2, 0.30000000000000004, 0.4, 0.4]
    """

    name = "co-teaching"
    n_networks = 2

    def __init__(self, *, noise_rate: float | None = None, t_k: int = 8) -> None:
        if noise_rate is None:
            raise InvalidParameterError(
                f"{self.name} needs noise_rate, the estimated share of wrong labels "
                "(for example cleanlab's estimate): pass noise_rate=0.2")
        self.noise_rate = check_fraction(noise_rate, "noise_rate", high_open=True)
        self.t_k = check_int(t_k, "t_k", minimum=1)
        self._forget: list[float] = []
        self._fraction: list[float] = []
        self._kept = 0
        self._seen = 0

    def forget_rate(self, epoch: int) -> float:
        """:math:`1 - R(T)`: the share of each batch left out in ``epoch`` (from 0)."""
        return self.noise_rate * min(epoch / self.t_k, 1.0)

    def start(self, labels: np.ndarray, n_classes: int, config: LoopConfig,
              round_index: int) -> None:
        self._forget, self._fraction = [], []
        self._kept = self._seen = 0

    def criteria(self, step: Step, losses: list[torch.Tensor]) -> list[torch.Tensor]:
        """Per-item selection criterion of each network (smaller is kept): the loss."""
        return losses

    def selected(self, step: Step, chosen: list[torch.Tensor]) -> None:
        """Called with the positions in the batch each network chose."""

    def loss(self, step: Step) -> list[torch.Tensor]:
        import torch
        import torch.nn.functional as F

        per_item = [F.cross_entropy(step.logits(k).float(), step.targets, reduction="none")
                    for k in range(2)]
        criteria = self.criteria(step, [loss.detach() for loss in per_item])
        b = int(step.targets.shape[0])
        keep = max(1, math.floor((1.0 - self.forget_rate(step.epoch)) * b + 0.5))
        chosen = [torch.argsort(c, stable=True)[:keep] for c in criteria]
        self.selected(step, chosen)
        self._kept += keep
        self._seen += b
        # each network learns from the items its peer chose
        return [per_item[0][chosen[1]].mean(), per_item[1][chosen[0]].mean()]

    def end_epoch(self, epoch: int, networks: Sequence[Network], inputs: Inputs,
                  labels: np.ndarray) -> None:
        self._forget.append(self.forget_rate(epoch))
        self._fraction.append(self._kept / max(self._seen, 1))
        self._kept = self._seen = 0

    def records(self) -> dict[str, Any]:
        return {"forget_rate": list(self._forget), "selected_fraction": list(self._fraction)}

    def __repr__(self) -> str:
        return f"{type(self).__name__}(noise_rate={self.noise_rate}, t_k={self.t_k})"
