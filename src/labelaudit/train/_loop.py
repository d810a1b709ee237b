"""One training loop for every learning-with-noisy-labels method.

:func:`train_networks` trains ``method.n_networks`` networks with AdamW over the batches an
:class:`Inputs` gives, asking a :class:`~labelaudit.train._methods._base.Method` for the loss
of every batch. The methods differ only in their hooks; the loop, the seeding, the learning
rate schedule and the device handling are the same for all of them.

Examples
--------
>>> import numpy as np
>>> from labelaudit.train._head import EmbeddingInputs, head_factory
>>> from labelaudit.train._methods import make_method
>>> rng = np.random.default_rng(0)
>>> x = rng.normal(size=(40, 4)).astype(np.float32)
>>> y = (x[:, 0] > 0).astype(int)
>>> nets, log = train_networks(head_factory(4, 2, hidden=8), EmbeddingInputs(x), y, 2,
...                            make_method("base"), LoopConfig(epochs=3, batch_size=16))
>>> len(nets), log.epochs, len(log.losses)
(1, 3, 3)
>>> predict_proba(nets[0], EmbeddingInputs(x)).shape
(40, 2)
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from labelaudit._errors import InvalidInputError, InvalidParameterError, format_rows

if TYPE_CHECKING:
    import torch

    from labelaudit.train._methods._base import Method

__all__ = [
    "Inputs",
    "LoopConfig",
    "Network",
    "Step",
    "TrainingLog",
    "predict_proba",
    "resolve_device",
    "train_networks",
]


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


def resolve_device(device: str | None) -> torch.device:
    """``device`` as a ``torch.device`` this machine has; None means CUDA when available,
    else the CPU (:func:`labelaudit.models.resolve_device`, shared by every command)."""
    from labelaudit.models._runtime import resolve_device as resolve

    return resolve(device)


def _check_config(config: LoopConfig) -> None:
    if not isinstance(config.epochs, (int, np.integer)) or config.epochs < 1:
        raise InvalidParameterError(f"epochs must be an integer >= 1, got {config.epochs!r}")
    if not isinstance(config.batch_size, (int, np.integer)) or config.batch_size < 1:
        raise InvalidParameterError(
            f"batch_size must be an integer >= 1, got {config.batch_size!r}")
    if not (float(config.learning_rate) > 0 and math.isfinite(config.learning_rate)):
        raise InvalidParameterError(
            f"learning_rate must be a number > 0, got {config.learning_rate!r}")
    if not float(config.weight_decay) >= 0:
        raise InvalidParameterError(
            f"weight_decay must be a number >= 0, got {config.weight_decay!r}")
    if not isinstance(config.accumulate, (int, np.integer)) or config.accumulate < 1:
        raise InvalidParameterError(
            f"accumulate must be an integer >= 1, got {config.accumulate!r}")
    if config.max_grad_norm is not None and not float(config.max_grad_norm) > 0:
        raise InvalidParameterError(
            f"max_grad_norm must be None or a number > 0, got {config.max_grad_norm!r}")
    if not 0.0 <= float(config.warmup) < 1.0:
        raise InvalidParameterError(f"warmup must be in [0, 1), got {config.warmup!r}")
    state = config.random_state
    if state is not None and (not isinstance(state, (int, np.integer)) or state < 0):
        raise InvalidParameterError(
            f"random_state must be None or an integer >= 0, got {state!r}")


def _check_labels(labels: np.ndarray, n_classes: int, n_items: int) -> np.ndarray:
    if not isinstance(n_classes, (int, np.integer)) or n_classes < 2:
        raise InvalidParameterError(f"n_classes must be an integer >= 2, got {n_classes!r}")
    array = np.asarray(labels)
    if array.ndim != 1 or array.shape[0] != n_items:
        raise InvalidInputError(
            f"labels must be one integer per item, shape ({n_items},), got shape {array.shape}")
    if n_items == 0:
        raise InvalidInputError("there are no training items: pass at least one labelled item")
    if not np.issubdtype(array.dtype, np.integer):
        raise InvalidInputError(
            f"labels must be integers 0 .. n_classes - 1, got dtype {array.dtype}")
    bad = np.flatnonzero((array < 0) | (array >= n_classes))
    if bad.size:
        raise InvalidInputError(
            f"labels must be in 0 .. {n_classes - 1}: {format_rows(bad)} are not "
            f"(first value {array[bad[0]]!r}); encode classes as 0 .. n_classes - 1")
    return array.astype(np.int64, copy=False)


def _lr_lambda(total_steps: int, warmup: float) -> Callable[[int], float]:
    """Linear warm-up over ``warmup`` of the steps, then linear decay to 0; 1 if no warm-up."""
    if warmup <= 0:
        return lambda step: 1.0
    warm = max(1, int(round(warmup * total_steps)))

    def factor(step: int) -> float:
        if step < warm:
            return (step + 1) / warm
        return max(0.0, (total_steps - step) / max(1, total_steps - warm))

    return factor


def _precision(config: LoopConfig, device: Any) -> Any:
    """The autocast dtype: bfloat16 on CUDA GPUs that have it, float16 (with a gradient
    scaler) on older ones, None (float32) on a CPU or when ``bf16`` is off."""
    import torch

    if not config.bf16 or device.type != "cuda":
        return None
    return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16


def _step(optimizer: Any, extra: Any, scaler: Any, params: list, max_grad_norm: float | None,
          ) -> None:
    """One optimiser step (unscaling, clipping), then gradients cleared."""
    import torch

    if scaler is not None:
        scaler.unscale_(optimizer)
    if max_grad_norm is not None:
        torch.nn.utils.clip_grad_norm_(params, max_grad_norm)
    if scaler is not None:
        scaler.step(optimizer)
        scaler.update()
    else:
        optimizer.step()
    if extra is not None:
        extra.step()
        extra.zero_grad(set_to_none=True)
    optimizer.zero_grad(set_to_none=True)


def _pieces(index: np.ndarray, halved: bool) -> list[np.ndarray]:
    """The batch itself, or its two halves after the GPU ran out of memory."""
    if not halved or len(index) < 2:
        return [index]
    middle = len(index) // 2
    return [index[:middle], index[middle:]]


def _empty_cuda_cache() -> None:
    import gc

    import torch

    gc.collect()
    if torch.cuda.is_available():
        torch.cuda.empty_cache()


def _out_of_memory(size: int, config: LoopConfig) -> InvalidParameterError:
    return InvalidParameterError(
        f"the GPU ran out of memory on a batch of {size} items, and again at half that size; "
        f"lower --batch-size (now {config.batch_size}; batch_size in Python) or --max-length")


def _eval_out_of_memory(size: int) -> InvalidParameterError:
    return InvalidParameterError(
        f"the GPU ran out of memory predicting batches of {size} items, and again at half "
        "that size; lower the evaluation batch (eval_batch_size in Python) or --max-length")


def train_networks(make_network: Callable[[], Network], inputs: Inputs, labels: np.ndarray,
                   n_classes: int, method: Method,
                   config: LoopConfig) -> tuple[list[Network], TrainingLog]:
    """Train ``method.n_networks`` networks on ``inputs`` with the given ``labels``.

    Each round (``method.rounds()``, 1 for all methods but SEAL) makes fresh networks with
    ``make_network()``, each after ``torch.manual_seed`` with a seed drawn from
    ``np.random.default_rng(config.random_state)``, and trains them with AdamW for
    ``config.epochs`` epochs; the loss of each batch comes from ``method.loss``.

    Parameters
    ----------
    make_network : callable
        Returns a new, untrained network (a ``torch.nn.Module`` with ``features`` and
        ``classify``).
    inputs : Inputs
        The training items.
    labels : np.ndarray of shape (n_samples,)
        The given, possibly wrong, labels in ``0 .. n_classes - 1``.
    n_classes : int
        Number of classes.
    method : Method
        The hooks of the learning-with-noisy-labels method; one instance per run.
    config : LoopConfig
        Loop options.

    Returns
    -------
    networks : list
        The networks of the last round, in eval mode, on the training device.
    log : TrainingLog
        Losses per epoch and the method's records.
    """
    import torch

    from labelaudit.models._encoder import torch_setup
    from labelaudit.models._progress import progress_bar

    _check_config(config)
    targets_all = _check_labels(labels, n_classes, len(inputs))
    torch_setup()
    device = resolve_device(config.device)
    rng = np.random.default_rng(config.random_state)
    precision = _precision(config, device)
    n_rounds = int(method.rounds())
    n_batches = math.ceil(len(inputs) / config.batch_size)
    total_steps = config.epochs * math.ceil(n_batches / config.accumulate)
    losses: list[float] = []
    networks: list[Any] = []
    oom = torch.cuda.OutOfMemoryError
    halved = False  # set after a batch ran out of GPU memory: batches then run in halves

    with progress_bar(config.epochs * n_rounds, f"training ({method.name})", unit=" epochs",
                      enabled=config.progress) as bar:
        for round_index in range(n_rounds):
            method.start(targets_all, int(n_classes), config, round_index)
            networks = []
            for _ in range(method.n_networks):
                torch.manual_seed(int(rng.integers(2**62)))
                module: Any = make_network()
                networks.append(module.to(device))
            extra = method.extra_optimizer()
            params = [p for net in networks for p in net.parameters() if p.requires_grad]
            if extra is None:
                params += list(method.parameters())
            optimizer = torch.optim.AdamW(params, lr=config.learning_rate,
                                          weight_decay=config.weight_decay)
            schedule = torch.optim.lr_scheduler.LambdaLR(
                optimizer, _lr_lambda(total_steps, float(config.warmup)))
            scaler = torch.amp.GradScaler("cuda") if precision == torch.float16 else None

            def run_piece(piece: np.ndarray, size: int, context: tuple[int, int], *,
                          networks: list[Any] = networks, scaler: Any = scaler) -> float:
                """Loss and gradients of ``piece`` of a batch of ``size`` items, weighted by
                its share of the batch; returns its share of the batch's mean loss."""
                step = Step(
                    index=piece, batch=inputs.batch(piece, device),
                    targets=torch.as_tensor(targets_all[piece], device=device),
                    networks=networks, epoch=context[0], n_epochs=config.epochs,
                    round_index=context[1], rng=rng)
                autocast = (torch.autocast("cuda", dtype=precision)
                            if precision is not None else nullcontext())
                with autocast:
                    out = method.loss(step)
                parts = out if isinstance(out, list) else [out]
                loss = parts[0] if len(parts) == 1 else torch.stack(parts).sum()
                share = len(piece) / size
                scaled = loss * (share / config.accumulate)
                (scaler.scale(scaled) if scaler is not None else scaled).backward()
                method.after_step(step)
                return float(loss.detach()) * share / len(parts)

            for epoch in range(config.epochs):
                epoch_started = time.perf_counter()
                for net in networks:
                    net.train()
                total, count = 0.0, 0
                batches = inputs.batches(rng, config.batch_size, shuffle=True)
                for position, index in enumerate(batches):
                    index = np.asarray(index)
                    context = (epoch, round_index)
                    try:
                        value = sum(run_piece(piece, len(index), context)
                                    for piece in _pieces(index, halved))
                    except oom as error:
                        if halved or len(index) < 2:
                            raise _out_of_memory(len(index), config) from error
                        # once: this batch again in two halves, and every later batch too
                        halved = True
                        optimizer.zero_grad(set_to_none=True)
                        _empty_cuda_cache()
                        try:
                            value = sum(run_piece(piece, len(index), context)
                                        for piece in _pieces(index, halved))
                        except oom as again:
                            raise _out_of_memory(len(index), config) from again
                    if ((position + 1) % config.accumulate == 0
                            or position + 1 == len(batches)):
                        _step(optimizer, extra, scaler, params, config.max_grad_norm)
                        schedule.step()
                    total += value
                    count += 1
                losses.append(total / max(count, 1))
                method.end_epoch(epoch, networks, inputs, targets_all)
                bar.set_postfix_str(
                    f"{len(inputs) / max(time.perf_counter() - epoch_started, 1e-9):,.0f} ex/s",
                    refresh=False)
                bar.update(1)
            method.end_round(networks, inputs, targets_all)

    for net in networks:
        net.eval()
    log = TrainingLog(epochs=config.epochs * n_rounds, losses=losses,
                      info=dict(method.records()))
    return networks, log


def predict_proba(network: Network, inputs: Inputs, *, batch_size: int = 256,
                  device: str | None = None) -> np.ndarray:
    """Softmax outputs of ``network`` on ``inputs``, shape ``(n_samples, n_classes)``.

    Runs in eval mode without gradients, rows in input order, as float64. ``device`` None
    keeps the network where it is; otherwise the network moves to ``device``. The
    network's train/eval mode is restored afterwards.
    """
    import torch

    if not isinstance(batch_size, (int, np.integer)) or batch_size < 1:
        raise InvalidParameterError(f"batch_size must be an integer >= 1, got {batch_size!r}")
    module: Any = network
    if device is None:
        first = next(iter(module.parameters()), None)
        where = first.device if first is not None else torch.device("cpu")
    else:
        where = resolve_device(device)
        module.to(where)
    was_training = bool(module.training)
    module.eval()
    parts: list[tuple[np.ndarray, np.ndarray]] = []

    def run(size: int) -> None:
        parts.clear()
        with torch.no_grad():
            for index in inputs.batches(np.random.default_rng(0), size, shuffle=False):
                index = np.asarray(index)
                logits = network.classify(network.features(inputs.batch(index, where)))
                parts.append((index, torch.softmax(logits.double(), dim=1).cpu().numpy()))

    try:
        try:
            run(batch_size)
        except torch.cuda.OutOfMemoryError as error:
            if batch_size < 2:
                raise _eval_out_of_memory(batch_size) from error
            _empty_cuda_cache()  # once more at half the batch size
            try:
                run(batch_size // 2)
            except torch.cuda.OutOfMemoryError as again:
                raise _eval_out_of_memory(batch_size) from again
    finally:
        module.train(was_training)
    if not parts:
        return np.zeros((0, 0), dtype=np.float64)
    out = np.empty((len(inputs), parts[0][1].shape[1]), dtype=np.float64)
    for index, probs in parts:
        out[index] = probs
    return out
