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
    r"""Data parameters (Saxena, Tuzel and DeCoste, "Data Parameters: A New Family of Parameters
    for Learning a Differentiable Curriculum", NeurIPS 2019): a learned temperature per item
    (and with ``learn_class`` per class), kept as a logarithm (:math:`\sigma = e^{s}`), divides
    the logits of item :math:`i` by :math:`\sigma^*_i = \sigma^{class}_{\tilde y_i} +
    \sigma^{inst}_i` (:math:`\sigma^{inst}_i` alone without class parameters):

    .. math:: \mathcal{L} = -\frac{1}{b}\sum_i \log
              \frac{\exp(z_{i,\tilde y_i} / \sigma^*_i)}{\sum_j \exp(z_{ij} / \sigma^*_i)}
              + \frac{w_{class}}{2}\sum_i (s^{class}_{\tilde y_i})^2
              + \frac{w_{inst}}{2}\sum_i (s^{inst}_i)^2 .

    A wrong label raises its temperature, shrinking its gradient; predictions use plain logits.
    As in the authors' code, a momentum-0.9 SGD updates the batch's entries and log-temperatures
    are clipped to :math:`[\log(1/20), \log 20]`; training starts at :math:`\sigma^* = 1`
    (theirs at 2). ``lr_inst_param=0.2``, ``wd_inst_param=0``: NoisywikiHow's; ``lr_class_param
    =0.1``: the paper's CIFAR; ``learn_class`` off: with 40% noise class temperatures ran to the
    bounds and lost the gain. Records ``instance_temperature`` (and ``class_temperature``).
    """

    name = "data-parameters"

    def __init__(self, *, lr_inst_param: float = 0.2, wd_inst_param: float = 0.0,
                 lr_class_param: float = 0.1, wd_class_param: float = 0.0,
                 learn_class: bool = False) -> None:
        self.lr_inst_param = check_number(lr_inst_param, "lr_inst_param", low=0, low_open=True)
        self.wd_inst_param = check_number(wd_inst_param, "wd_inst_param", low=0)
        self.lr_class_param = check_number(lr_class_param, "lr_class_param", low=0, low_open=True)
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
        self._class = torch.full((n_classes,), init, device=device, requires_grad=self.learn_class)

    def parameters(self) -> list[torch.Tensor]:
        assert self._inst is not None and self._class is not None
        return [self._inst, self._class] if self.learn_class else [self._inst]

    def extra_optimizer(self) -> torch.optim.Optimizer | None:
        assert self._inst is not None and self._class is not None
        groups = [{"params": [self._inst], "lr": self.lr_inst_param}]
        if self.learn_class:
            groups.append({"params": [self._class], "lr": self.lr_class_param})
        return _sparse_sgd(groups, momentum=0.9)

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


def _sparse_sgd(groups: list[dict[str, Any]], *, momentum: float) -> torch.optim.Optimizer:
    """SGD with momentum that touches only entries whose gradient is non-zero (the class is
    made here so that importing the module does not import torch)."""
    import torch

    class SparseSGD(torch.optim.Optimizer):

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

    optimizer: torch.optim.Optimizer = SparseSGD(groups, momentum=momentum)
    return optimizer
