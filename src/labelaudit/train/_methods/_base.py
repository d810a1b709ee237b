"""The hook object every learning-with-noisy-labels method implements.

The training loop (:func:`labelaudit.train._loop.train_networks`) owns the networks, the
optimiser, the batches and the epochs; a :class:`Method` only says how one batch turns into
a loss, and what to remember between epochs and rounds. The default hooks do nothing, so
:class:`Method` itself is plain cross-entropy training.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from labelaudit._errors import InvalidParameterError

if TYPE_CHECKING:
    import torch

    from labelaudit.train._loop import Inputs, LoopConfig, Network, Step

__all__ = ["Method", "check_fraction", "check_positive"]


class Method:
    """A learning-with-noisy-labels method as hooks on one shared training loop.

    One instance serves one training run. The loop calls, for each round ``r`` in
    ``range(rounds())``: :meth:`start`, then for every batch :meth:`loss` (one scalar per
    network; the loop sums them and steps the optimisers) and :meth:`after_step`, at the end
    of every epoch :meth:`end_epoch`, and at the end of the round :meth:`end_round`. What a
    method wants to report goes into :meth:`records`, which the loop copies into
    ``TrainingLog.info``.

    Attributes
    ----------
    name : str
        The registry name.
    n_networks : int
        How many networks the loop trains side by side (2 for co-teaching).
    """

    name: str = "base"
    n_networks: int = 1

    def rounds(self) -> int:
        """Training rounds; each round trains freshly initialised networks."""
        return 1

    def start(self, labels: np.ndarray, n_classes: int, config: LoopConfig,
              round_index: int) -> None:
        """Called before the networks of round ``round_index`` are trained."""

    def loss(self, step: Step) -> torch.Tensor | list[torch.Tensor]:
        """The training loss of one batch: one scalar, or one scalar per network."""
        import torch.nn.functional as F

        return [F.cross_entropy(step.logits(k), step.targets) for k in range(len(step.networks))]

    def after_step(self, step: Step) -> None:
        """Called after the optimisers stepped (clamp parameters, count selections)."""

    def end_epoch(self, epoch: int, networks: Sequence[Network], inputs: Inputs,
                  labels: np.ndarray) -> None:
        """Called after each epoch, networks in train mode."""

    def end_round(self, networks: Sequence[Network], inputs: Inputs,
                  labels: np.ndarray) -> None:
        """Called after the last epoch of a round."""

    def parameters(self) -> list[torch.Tensor]:
        """Extra learnable tensors (data parameters). Without :meth:`extra_optimizer` the
        loop adds them to the networks' AdamW optimiser."""
        return []

    def extra_optimizer(self) -> torch.optim.Optimizer | None:
        """An optimiser of the method's own for :meth:`parameters`, or None. Called once
        per round, after :meth:`start`."""
        return None

    def records(self) -> dict[str, Any]:
        """What the method did, for ``TrainingLog.info``; called once after training."""
        return {}

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


def check_fraction(name: str, value: float, *, upper_open: bool = True) -> float:
    """``value`` as a float in [0, 1) (or [0, 1] when not ``upper_open``), else an error."""
    number = float(value)
    ok = 0.0 <= number < 1.0 if upper_open else 0.0 <= number <= 1.0
    if not ok:
        bound = "1)" if upper_open else "1]"
        raise InvalidParameterError(f"{name} must be in [0, {bound}, got {value!r}")
    return number


def check_positive(name: str, value: float, *, allow_zero: bool = False) -> float:
    """``value`` as a float > 0 (or >= 0 with ``allow_zero``), else an error."""
    number = float(value)
    if not (number > 0 or (allow_zero and number == 0)) or not np.isfinite(number):
        sign = ">= 0" if allow_zero else "> 0"
        raise InvalidParameterError(f"{name} must be a finite number {sign}, got {value!r}")
    return number
