"""What the one training loop (:func:`labelaudit.models.train_networks`) talks to.

:class:`Inputs` (the training items) and :class:`Network` (a representation and a classifier
on it) are protocols; :class:`LoopConfig` holds the loop's options, :class:`TrainingLog`
what a run did, :class:`Step` one batch as a method sees it, and :class:`Method` the hooks
through which a learning-with-noisy-labels method gives the loop its loss. :class:`Method`
itself is plain cross-entropy training (the ``base`` method of ``labelaudit train`` and the
loss of the ``finetune`` scorer).

Examples
--------
>>> LoopConfig(epochs=3).batch_size
64
>>> Method().name, Method().n_networks, Method().rounds()
('base', 1, 1)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

if TYPE_CHECKING:
    import torch

__all__ = ["Inputs", "LoopConfig", "Method", "Network", "Step", "TrainingLog"]


class Inputs(Protocol):
    """The training items, as the loop sees them."""

    def __len__(self) -> int: ...

    def batches(self, rng: np.random.Generator, batch_size: int, *,
                shuffle: bool) -> list[np.ndarray]:
        """Index arrays that cover ``0 .. n - 1`` once (one epoch)."""
        ...

    def batch(self, index: np.ndarray, device: torch.device) -> Any:
        """The items at ``index``, ready for :meth:`Network.features`."""
        ...


class Network(Protocol):
    """A ``torch.nn.Module`` split in two: a representation and a classifier on it."""

    def features(self, batch: Any) -> torch.Tensor:
        """``(b, d)`` representation of a batch (mixup mixes here)."""
        ...

    def classify(self, features: torch.Tensor) -> torch.Tensor:
        """``(b, n_classes)`` logits from :meth:`features`."""
        ...


@dataclass(frozen=True)
class LoopConfig:
    """Options of the training loop, shared by all methods.

    Parameters
    ----------
    epochs : int
        Passes over the training items per round.
    batch_size : int
        Items per optimiser step.
    learning_rate, weight_decay : float
        AdamW's options for the networks' parameters.
    warmup : float
        Share of the steps of a round with a linear warm-up, followed by a linear decay to 0;
        0 keeps the learning rate constant.
    device : str or None
        Torch device; None picks ``"cuda"`` when available, else ``"cpu"``.
    bf16 : bool
        Mixed precision on CUDA: forward passes under ``torch.autocast`` in bfloat16, or in
        float16 with a gradient scaler on GPUs without bfloat16; float32 on a CPU.
    max_grad_norm : float or None
        Clip the gradients' global norm to this before each step (None: no clipping).
    accumulate : int
        Batches whose gradients are summed before each optimiser step (the effective
        batch is ``batch_size * accumulate``).
    random_state : int or None
        Seeds the batch order, the methods' randomness and (through ``torch.manual_seed``)
        each network's initialisation and dropout.
    progress : bool
        Show a progress bar over epochs on stderr.
    """

    epochs: int = 20
    batch_size: int = 64
    learning_rate: float = 1e-3
    weight_decay: float = 0.0
    warmup: float = 0.0
    device: str | None = None
    bf16: bool = False
    max_grad_norm: float | None = None
    accumulate: int = 1
    random_state: int | None = 0
    progress: bool = False


@dataclass
class TrainingLog:
    """What a training run did.

    Attributes
    ----------
    epochs : int
        Epochs trained over all rounds (``config.epochs * method.rounds()``).
    losses : list of float
        Mean training loss per epoch (averaged over batches and networks), all rounds in turn.
    info : dict
        Method-specific records (forget rates, soft labels, temperatures, ...).
    """

    epochs: int
    losses: list[float]
    info: dict[str, Any]


@dataclass
class Step:
    """One batch as a method's :meth:`~Method.loss` sees it.

    Attributes
    ----------
    index : np.ndarray
        Positions of the batch's items in the training set.
    batch : Any
        The batch from :meth:`Inputs.batch`.
    targets : torch.Tensor
        The given labels of the batch, ``(b,)`` int64 on the training device.
    networks : list
        The networks being trained.
    epoch, n_epochs : int
        The current epoch (from 0) and the epochs of the round.
    round_index : int
        The current round (from 0).
    rng : np.random.Generator
        The run's generator, for methods that draw random numbers (mixup).
    """

    index: np.ndarray
    batch: Any
    targets: torch.Tensor
    networks: Sequence[Network]
    epoch: int
    n_epochs: int
    round_index: int
    rng: np.random.Generator
    _features: dict[int, torch.Tensor] = field(default_factory=dict, repr=False)
    _logits: dict[int, torch.Tensor] = field(default_factory=dict, repr=False)

    def features(self, k: int = 0) -> torch.Tensor:
        """Network ``k``'s representation of the batch (computed once)."""
        if k not in self._features:
            self._features[k] = self.networks[k].features(self.batch)
        return self._features[k]

    def logits(self, k: int = 0) -> torch.Tensor:
        """Network ``k``'s logits for the batch, ``(b, n_classes)`` (computed once)."""
        if k not in self._logits:
            self._logits[k] = self.networks[k].classify(self.features(k))
        return self._logits[k]


class Method:
    """A learning-with-noisy-labels method as hooks on one shared training loop.

    The training loop (:func:`labelaudit.models.train_networks`) owns the networks, the
    optimiser, the batches and the epochs; a method only says how one batch turns into a
    loss, and what to remember between epochs and rounds. The default hooks do nothing, so
    :class:`Method` itself is plain cross-entropy training.

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
