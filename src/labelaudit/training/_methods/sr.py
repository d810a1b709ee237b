"""Sparse regularisation: temperature-scaled cross-entropy plus an lp-norm penalty."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from labelaudit._validation import check_number
from labelaudit.models import Method

if TYPE_CHECKING:
    import torch

    from labelaudit.models import Inputs, LoopConfig, Network, Step


class SparseRegularization(Method):
    r"""Sparse regularisation (Zhou et al., "Learning with Noisy Labels via Sparse
    Regularization", ICCV 2021): on the temperature-scaled softmax :math:`p =
    \mathrm{softmax}(z / \tau)`,

    .. math:: \mathcal{L}_t = \mathrm{CE}(p, \tilde y) + \lambda_t \, \lVert p \rVert_p^p,
              \qquad \lVert p \rVert_p^p = \sum_k p_k^{\,p}, \qquad
              \lambda_t = \lambda_0 \, \rho^{\,t},

    with :math:`t` the epoch from 0; the :math:`\ell_p` term (:math:`0 < p \le 1`, default 0.1)
    favours one-hot outputs, robust to symmetric noise; :math:`p_k` is clipped to
    :math:`[10^{-7}, 1]` (authors' code). NoisywikiHow tunes ``tau=0.5`` (ours) and ``lambda0=0``
    (Table 11). Our ``lambda0=0.5, rho=1.02``: the penalty grows with the classes (uniform
    output pays :math:`K^{1-p}`, 95 for 158), and with 40% symmetric noise and 158 classes 0.5
    raised clean accuracy (0.58 against 0.49) while 2 and 4 collapsed training (with 6 classes
    2 to 4 help more). Records ``lambda``, the weight of each epoch.
    """

    name = "sr"

    def __init__(self, *, tau: float = 0.5, p: float = 0.1, lambda0: float = 0.5,
                 rho: float = 1.02) -> None:
        self.tau = check_number(tau, "tau", low=0, low_open=True)
        self.p = check_number(p, "p", low=0, high=1, low_open=True)
        self.lambda0 = check_number(lambda0, "lambda0", low=0)
        self.rho = check_number(rho, "rho", low=0, low_open=True)
        self._lambdas: list[float] = []

    def weight(self, epoch: int) -> float:
        """:math:`\\lambda_t = \\lambda_0 \\rho^t`."""
        return self.lambda0 * self.rho**epoch

    def start(self, labels: np.ndarray, n_classes: int, config: LoopConfig,
              round_index: int) -> None:
        self._lambdas = []

    def loss(self, step: Step) -> torch.Tensor:
        import torch
        import torch.nn.functional as F

        logits = step.logits(0).float() / self.tau
        loss = F.cross_entropy(logits, step.targets)
        lam = self.weight(step.epoch)
        if lam > 0:
            probs = torch.softmax(logits, dim=1).clamp(1e-7, 1.0)
            loss = loss + lam * probs.pow(self.p).sum(dim=1).mean()
        return loss

    def end_epoch(self, epoch: int, networks: Sequence[Network], inputs: Inputs,
                  labels: np.ndarray) -> None:
        self._lambdas.append(self.weight(epoch))

    def records(self) -> dict[str, Any]:
        return {"lambda": list(self._lambdas)}

    def __repr__(self) -> str:
        return (f"SparseRegularization(tau={self.tau}, p={self.p}, lambda0={self.lambda0}, "
                f"rho={self.rho})")
