"""CNLCU: co-teaching that selects by a lower confidence bound of each item's recent losses."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from labelaudit._validation import check_fraction, check_int
from labelaudit.training._methods.co_teaching import CoTeaching

if TYPE_CHECKING:
    import torch

    from labelaudit.models import LoopConfig, Step


class CNLCU(CoTeaching):
    r"""Co-teaching with confidence bounds on losses over time, CNLCU-S (Xia et al., "Sample
    Selection with Uncertainty of Losses for Learning with Noisy Labels", ICLR 2022).

    Small-loss selection drops hard but clean items whose loss happened to be high; CNLCU ranks
    items by a *lower confidence bound* of their mean loss over the last :math:`t \le` ``window``
    (default 5) epochs, which favours rarely chosen items. With losses soft-truncated by
    :math:`\psi(x) = \log(1 + x + x^2/2)` and :math:`n_i` the times the network chose item
    :math:`i`, the criterion is (the soft-truncation bound, as in the authors' code):

    .. math:: \tilde\mu_i = \frac{1}{t}\sum_{j=1}^{t} \psi(\ell_{i,j}), \qquad
              \ell^\star_i = \max\Big(0,\; \tilde\mu_i -
              \frac{\sigma^2 (t + \sigma^2 \log(2t) / t^2)}{n_i + 1 - \sigma^2}\Big).

    Selection and forget rate are :class:`CoTeaching`'s; losses are kept per epoch; ``tau_min``
    (NoisywikiHow Table 9, default 0.3) is :math:`\sigma^2`, decaying linearly to 0 (authors'
    code, their ``co_lambda``); CNLCU-H (outlier removal) is not implemented.
    """

    name = "cnlcu"

    def __init__(self, *, noise_rate: float | None = None, t_k: int = 8, tau_min: float = 0.3,
                 window: int = 5) -> None:
        super().__init__(noise_rate=noise_rate, t_k=t_k)
        self.tau_min = check_fraction(tau_min, "tau_min", high_open=True)
        self.window = check_int(window, "window", minimum=1)
        self._history = np.zeros((2, 0, self.window))
        self._observed = np.zeros((2, 0), dtype=np.int64)
        self._chosen = np.zeros((2, 0), dtype=np.int64)

    def start(self, labels: np.ndarray, n_classes: int, config: LoopConfig,
              round_index: int) -> None:
        super().start(labels, n_classes, config, round_index)
        n = len(labels)
        self._history = np.zeros((2, n, self.window))
        self._observed = np.zeros((2, n), dtype=np.int64)
        self._chosen = np.zeros((2, n), dtype=np.int64)

    def sigma2(self, epoch: int, n_epochs: int) -> float:
        """:math:`\\sigma^2` in ``epoch``: ``tau_min`` decaying linearly to 0."""
        return self.tau_min * (1.0 - epoch / max(n_epochs, 1))

    def criteria(self, step: Step, losses: list[torch.Tensor]) -> list[torch.Tensor]:
        import torch

        index = step.index
        s2 = self.sigma2(step.epoch, step.n_epochs)
        out = []
        for k, loss in enumerate(losses):
            x = loss.double().cpu().numpy()
            slot = self._observed[k, index] % self.window
            self._history[k, index, slot] = np.log1p(x + 0.5 * x * x)
            self._observed[k, index] += 1
            t = np.minimum(self._observed[k, index], self.window).astype(np.float64)
            rows = self._history[k, index]
            filled = np.arange(self.window)[None, :] < t[:, None]
            mean = (rows * filled).sum(axis=1) / t
            bound = s2 * (t + s2 * np.log(2 * t) / t**2) / (self._chosen[k, index] + 1 - s2)
            out.append(torch.as_tensor(np.maximum(mean - bound, 0.0), device=loss.device))
        return out

    def selected(self, step: Step, chosen: list[torch.Tensor]) -> None:
        for k, positions in enumerate(chosen):
            self._chosen[k, step.index[positions.cpu().numpy()]] += 1

    def __repr__(self) -> str:
        return (f"CNLCU(noise_rate={self.noise_rate}, t_k={self.t_k}, tau_min={self.tau_min}, "
                f"window={self.window})")
