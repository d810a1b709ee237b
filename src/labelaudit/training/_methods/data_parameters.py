"""Data parameters: a learned temperature per class and per item scales the logits."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from labelaudit._validation import check_number
from labelaudit.models import Method, resolve_device

if TYPE_CHECKING:
    import torch

    from labelaudit.models import LoopConfig, Step


_LOG_MIN, _LOG_MAX = math.log(1 / 20), math.log(20)


class DataParameters(Method):
    r"""Curriculum learning with data parameters: a temperature per class and per item.

    Each training item :math:`i` (and, with ``learn_class``, each class :math:`c`) has a
    learnable temperature, kept as a logarithm (:math:`\sigma = e^{s}`). The logits of item
    :math:`i` with given label :math:`\tilde y_i` are divided by :math:`\sigma^*_i =
    \sigma^{class}_{\tilde y_i} + \sigma^{inst}_i` (just :math:`\sigma^{inst}_i` without
    class parameters) before the cross-entropy, as in the paper:

    .. math:: \mathcal{L} = -\frac{1}{b}\sum_i \log
              \frac{\exp(z_{i,\tilde y_i} / \sigma^*_i)}{\sum_j \exp(z_{ij} / \sigma^*_i)}
              + \frac{w_{class}}{2}\sum_i (s^{class}_{\tilde y_i})^2
              + \frac{w_{inst}}{2}\sum_i (s^{inst}_i)^2 .

    A hard or wrongly labelled item lowers its loss by raising its temperature, which
    flattens its softmax and shrinks its gradient: noisy items end with higher instance
    temperatures. Temperatures are used in training only; predictions use plain logits.

    As in the authors' code, the data parameters have their own SGD with momentum 0.9 that
    updates only the entries with a gradient in the batch (rows not in the batch keep their
    value and momentum), and log-temperatures are clipped to :math:`[\log(1/20), \log 20]`.
    Training starts at :math:`\sigma^* = 1`, plain cross-entropy: the instance temperature
    starts at 1, or, with class parameters, both start at 0.5 (the authors' code starts
    both at 1, so :math:`\sigma^* = 2`).

    Parameters
    ----------
    lr_inst_param : float, default=0.2
        Learning rate of the instance parameters (NoisywikiHow's tuned value).
    wd_inst_param : float, default=0.0
        Weight decay of the instance log-temperatures (NoisywikiHow's tuned value).
    lr_class_param : float, default=0.1
        Learning rate of the class parameters (the paper's CIFAR setting).
    wd_class_param : float, default=0.0
        Weight decay of the class log-temperatures.
    learn_class : bool, default=False
        Learn class temperatures too. Off by default: NoisywikiHow tunes instance
        parameters only, and on synthetic data with 40% noise learned class temperatures
        ran to the clipping bounds (one class at 20, the rest at 1/20) and lost the gain.

    Records in ``TrainingLog.info``: ``instance_temperature`` (n_samples,), the final
    :math:`\sigma^{inst}`, and with ``learn_class`` ``class_temperature`` (n_classes,).

    References
    ----------
    .. [1] S. Saxena, O. Tuzel and D. DeCoste, "Data Parameters: A New Family of Parameters
       for Learning a Differentiable Curriculum", NeurIPS 2019.

    Examples
    --------
    >>> DataParameters().lr_inst_param
    0.2
    """

    name = "data-parameters"

    def __init__(self, *, lr_inst_param: float = 0.2, wd_inst_param: float = 0.0,
                 lr_class_param: float = 0.1, wd_class_param: float = 0.0,
                 learn_class: bool = False) -> None:
        self.lr_inst_param = check_number(lr_inst_param, "lr_inst_param", low=0, low_open=True)
        self.wd_inst_param = check_number(wd_inst_param, "wd_inst_param", low=0)
        self.lr_class_param = check_number(lr_class_param, "lr_class_param", low=0,
                                           low_open=True)
        self.wd_class_param = check_number(wd_class_param, "wd_class_param", low=0)
        self.learn_class = bool(learn_class)
        self._inst: torch.Tensor | None = None
        self._class: torch.Tensor | None = None

    def start(self, labels: np.ndarray, n_classes: int, config: LoopConfig,
              round_index: int) -> None:
        import torch

        device = resolve_device(config.device)
        # start at sigma* = 1: both halves at 0.5, or the instance part alone at 1
        init = math.log(0.5) if self.learn_class else 0.0
        self._inst = torch.full((len(labels),), init, device=device, requires_grad=True)
        self._class = torch.full((n_classes,), init, device=device,
                                 requires_grad=self.learn_class)

    def parameters(self) -> list[torch.Tensor]:
        assert self._inst is not None and self._class is not None
        return [self._inst, self._class] if self.learn_class else [self._inst]

    def extra_optimizer(self) -> torch.optim.Optimizer | None:
        assert self._inst is not None and self._class is not None
        groups = [{"params": [self._inst], "lr": self.lr_inst_param}]
        if self.learn_class:
            groups.append({"params": [self._class], "lr": self.lr_class_param})
        return _SparseSGD(groups, momentum=0.9)

    def loss(self, step: Step) -> torch.Tensor:
        import torch
        import torch.nn.functional as F

        assert self._inst is not None and self._class is not None
        index = torch.as_tensor(step.index, device=self._inst.device)
        s_inst = self._inst[index]
        s_class = self._class[step.targets.to(self._class.device)]
        sigma = torch.exp(s_inst)
        if self.learn_class:
            sigma = sigma + torch.exp(s_class)
        sigma = sigma.to(step.targets.device)
        logits = step.logits(0).float() / sigma.unsqueeze(1)
        loss = F.cross_entropy(logits, step.targets)
        if self.wd_inst_param > 0:
            loss = loss + 0.5 * self.wd_inst_param * (s_inst**2).sum()
        if self.wd_class_param > 0 and self.learn_class:
            loss = loss + 0.5 * self.wd_class_param * (s_class**2).sum()
        return loss

    def after_step(self, step: Step) -> None:
        import torch

        with torch.no_grad():
            for tensor in self.parameters():
                tensor.clamp_(_LOG_MIN, _LOG_MAX)

    def records(self) -> dict[str, Any]:
        if self._inst is None or self._class is None:
            return {}
        out = {"instance_temperature": np.exp(self._inst.detach().cpu().double().numpy())}
        if self.learn_class:
            out["class_temperature"] = np.exp(self._class.detach().cpu().double().numpy())
        return out

    def __repr__(self) -> str:
        return (f"DataParameters(lr_inst_param={self.lr_inst_param}, "
                f"wd_inst_param={self.wd_inst_param}, lr_class_param={self.lr_class_param})")


def _sparse_sgd_class() -> type:
    import torch

    class SparseSGD(torch.optim.Optimizer):
        """SGD with momentum that touches only entries whose gradient is non-zero."""

        def __init__(self, params: Any, *, momentum: float) -> None:
            super().__init__(params, {"lr": 0.1, "momentum": momentum})

        @torch.no_grad()
        def step(self, closure: Any = None) -> None:  # type: ignore[override]
            for group in self.param_groups:
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    grad = p.grad
                    mask = grad != 0
                    state = self.state[p]
                    if "momentum_buffer" not in state:
                        state["momentum_buffer"] = torch.zeros_like(p)
                    buf = state["momentum_buffer"]
                    buf[mask] = group["momentum"] * buf[mask] + grad[mask]
                    p[mask] -= group["lr"] * buf[mask]

    return SparseSGD


def _SparseSGD(groups: list[dict[str, Any]], *, momentum: float) -> torch.optim.Optimizer:
    optimizer: torch.optim.Optimizer = _sparse_sgd_class()(groups, momentum=momentum)
    return optimizer
