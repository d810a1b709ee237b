"""CNLCU: co-teaching that selects by a lower confidence bound of each item's recent losses."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from labelaudit._errors import InvalidParameterError
from labelaudit._validation import check_fraction
from labelaudit.training._methods.co_teaching import CoTeaching

if TYPE_CHECKING:
    import torch

    from labelaudit.models import LoopConfig, Step


class CNLCU(CoTeaching):
    r"""Co-teaching with confidence bounds on losses over time (CNLCU-S, soft truncation).

    Plain small-loss selection keeps only what a network already fits and drops hard but
    clean items whose loss happened to be high. CNLCU instead ranks items by a *lower
    confidence bound* of their mean loss over a window of recent epochs, which favours
    items that were rarely selected (their mean loss is uncertain). For item :math:`i`
    with the last :math:`t \le` ``window`` losses :math:`\ell_{i,1..t}` (the current one
    included), soft-truncated by :math:`\psi(x) = \log(1 + x + x^2/2)`, and :math:`n_i`
    times the network chose it so far, the criterion is (the paper's soft-truncation
    bound, as in the authors' code):

    .. math:: \tilde\mu_i = \frac{1}{t}\sum_{j=1}^{t} \psi(\ell_{i,j}), \qquad
              \ell^\star_i = \max\Big(0,\; \tilde\mu_i -
              \frac{\sigma^2 (t + \sigma^2 \log(2t) / t^2)}{n_i + 1 - \sigma^2}\Big).

    Each network keeps the share :math:`R(T)` of the batch with the smallest
    :math:`\ell^\star` and its peer is updated on them, exactly as in
    :class:`~labelaudit.training._methods.co_teaching.CoTeaching` (same forget-rate ramp).

    Simplifications, documented: losses are remembered per epoch (the loss an item had
    when its batch was trained) rather than per iteration; ``tau_min`` (the name
    NoisywikiHow gives the option, Table 9) is the :math:`\sigma^2` of the bound (the
    authors' code passes the same option, ``co_lambda``, to both variants) and, as in their
    code, it decays linearly to 0 over the epochs of training, so exploration fades and
    selection ends as small-loss selection on the windowed mean. The hard-truncation
    variant (CNLCU-H, outlier removal by local outlier factor) is not implemented.

    Parameters
    ----------
    noise_rate : float
        Forget rate reached after ``t_k`` epochs. Required.
    t_k : int, default=8
        Epochs of the forget-rate ramp (NoisywikiHow, Table 9).
    tau_min : float, default=0.3
        :math:`\sigma^2` at the first epoch, in [0, 1) (NoisywikiHow, Table 9).
    window : int, default=5
        Number of recent losses per item ("fixed-length time intervals = 5").

    Records ``forget_rate`` and ``selected_fraction`` per epoch, as co-teaching does.

    References
    ----------
    .. [1] X. Xia, T. Liu, B. Han, M. Gong, J. Yu, G. Niu and M. Sugiyama, "Sample Selection
       with Uncertainty of Losses for Learning with Noisy Labels", ICLR 2022.

    Examples
    --------
    >>> CNLCU(noise_rate=0.2).window
    5
    """

    name = "cnlcu"

    def __init__(self, *, noise_rate: float | None = None, t_k: int = 8, tau_min: float = 0.3,
                 window: int = 5) -> None:
        super().__init__(noise_rate=noise_rate, t_k=t_k)
        self.tau_min = check_fraction(tau_min, "tau_min", high_open=True)
        if not isinstance(window, (int, np.integer)) or window < 1:
            raise InvalidParameterError(f"window must be an integer >= 1, got {window!r}")
        self.window = int(window)
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
