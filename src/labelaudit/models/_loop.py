"""The one training loop, for every learning-with-noisy-labels method and the ``finetune`` scorer.

:func:`train_networks` trains networks over the batches of an :class:`Inputs`, asking a
:class:`Method` (by itself plain cross-entropy) for the loss of every batch; the methods
differ only in their hooks. The steps (AdamW, schedule, mixed precision, clipping,
accumulation: :class:`TrainingSteps`) and the handling of a GPU out of memory are defined
once, here; TAPT, token fine-tuning and the CRF head, whose items are not one label each,
train with them too.

Examples
--------
>>> import numpy as np
>>> from labelaudit.models import EmbeddingInputs, head_factory
>>> rng = np.random.default_rng(0)
>>> x = rng.normal(size=(40, 4)).astype(np.float32)
>>> y = (x[:, 0] > 0).astype(int)
>>> nets, log = train_networks(head_factory(4, 2, hidden=8), EmbeddingInputs(x), y, 2,
...                            Method(), LoopConfig(epochs=3, batch_size=16))
>>> len(nets), log.epochs, len(log.losses)
(1, 3, 3)
>>> predict_proba(nets[0], EmbeddingInputs(x)).shape
(40, 2)
>>> factor = linear_schedule(10, 0.2)
>>> [round(factor(step), 2) for step in range(10)]
[0.5, 1.0, 1.0, 0.88, 0.75, 0.62, 0.5, 0.38, 0.25, 0.12]
>>> factor = transformers_linear_schedule(10, 2)
>>> [round(factor(step), 2) for step in range(4)]
[0.0, 0.5, 1.0, 0.88]
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from labelaudit._errors import InvalidInputError, InvalidParameterError, format_rows
from labelaudit.models._base import progress_bar
from labelaudit.models._encoder import resolve_device, torch_setup

if TYPE_CHECKING:
    import torch


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
    epochs, batch_size : passes over the items per round; items per optimiser step.
    learning_rate, weight_decay : AdamW's options for the networks' parameters.
    warmup : share of a round's steps with a linear warm-up, then linear decay to 0;
        0 keeps the learning rate constant.
    device : torch device; None picks ``"cuda"`` when available, else ``"cpu"``.
    bf16 : mixed precision on CUDA: autocast in bfloat16, or float16 with a gradient scaler
        on GPUs without bfloat16; float32 on a CPU.
    max_grad_norm : clip the gradients' global norm to this before each step (None: no).
    accumulate : batches summed per optimiser step (effective batch ``batch_size * accumulate``).
    random_state : seeds the batch order, the methods' randomness and each network's
        initialisation and dropout.
    progress : a progress bar over epochs on stderr.
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

    ``epochs`` over all rounds; ``losses``, the mean loss of each epoch (over batches and
    networks), all rounds in turn; ``info``, the method's records (forget rates...)."""

    epochs: int
    losses: list[float]
    info: dict[str, Any]


@dataclass
class Step:
    """One batch as a method's :meth:`~Method.loss` sees it: the items' positions
    (``index``), the :meth:`Inputs.batch`, their given labels (``targets``, on the device),
    the networks, epoch and round (from 0), and the run's generator (``rng``: mixup)."""

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
    """A learning-with-noisy-labels method as hooks on the one training loop.

    The loop (:func:`train_networks`) owns the networks, optimiser, batches and epochs; a
    method says how a batch turns into a loss. One instance serves one run: per round,
    :meth:`start`, then per batch :meth:`loss` and :meth:`after_step`, per epoch
    :meth:`end_epoch`, then :meth:`end_round`; :meth:`records` goes to
    ``TrainingLog.info``. The default hooks do nothing: plain cross-entropy training.

    ``name`` is the method's ``--method``; ``n_networks``, how many networks the loop trains
    side by side (2 for co-teaching).
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
        """Extra learnable tensors (data parameters), in the networks' AdamW unless
        :meth:`extra_optimizer` gives one."""
        return []

    def extra_optimizer(self) -> torch.optim.Optimizer | None:
        """The method's own optimiser for :meth:`parameters` (per round), or None."""
        return None

    def records(self) -> dict[str, Any]:
        """What the method did, for ``TrainingLog.info``; called once after training."""
        return {}

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


def linear_schedule(total_steps: int, warmup: float) -> Callable[[int], float]:
    """Learning-rate factor of each step: linear warm-up over ``warmup`` of the steps (at
    least one), then linear decay to 0; 1 throughout if ``warmup`` is 0."""
    if warmup <= 0:
        return lambda step: 1.0
    warm = max(1, int(round(warmup * total_steps)))

    def factor(step: int) -> float:
        if step < warm:
            return (step + 1) / warm
        return max(0.0, (total_steps - step) / max(1, total_steps - warm))

    return factor


def transformers_linear_schedule(total_steps: int,
                                 warmup_steps: int) -> Callable[[int], float]:
    """transformers' ``get_linear_schedule_with_warmup`` (the first step at 0), kept for
    the token fine-tuning scorer so its results stay those of earlier versions."""

    def factor(step: int) -> float:
        if step < warmup_steps:
            return float(step) / float(max(1, warmup_steps))
        return max(0.0, float(total_steps - step) / float(max(1, total_steps - warmup_steps)))

    return factor


def autocast_dtype(device: torch.device, *, enabled: bool = True,
                   float16: bool = True) -> torch.dtype | None:
    """Autocast dtype on ``device``: bfloat16 on CUDA GPUs that have it, else float16 (needs
    the gradient scaler; None with ``float16=False``); None (float32) on a CPU."""
    import torch

    if not enabled or device.type != "cuda":
        return None
    if torch.cuda.is_bf16_supported():
        return torch.bfloat16
    return torch.float16 if float16 else None


def autocast(dtype: torch.dtype | None) -> AbstractContextManager[Any]:
    """``torch.autocast`` on CUDA in ``dtype``, or nothing when it is None."""
    import torch

    return torch.autocast("cuda", dtype=dtype) if dtype is not None else nullcontext()


@dataclass
class TrainingSteps:
    """AdamW with a schedule, float16's gradient scaler and clipping: how every loop turns
    losses into updates (:meth:`backward` per batch, :meth:`step` every ``accumulate``)."""

    optimizer: Any
    schedule: Any
    params: list[Any]
    scaler: Any = None
    max_grad_norm: float | None = None
    extra: Any = None

    @classmethod
    def adamw(cls, params: Iterable[Any], *, learning_rate: float, weight_decay: float,
              lr_factor: Callable[[int], float], dtype: torch.dtype | None = None,
              max_grad_norm: float | None = None, extra: Any = None) -> TrainingSteps:
        """AdamW over ``params`` with ``LambdaLR(lr_factor)``; a scaler for float16."""
        import torch

        params = list(params)
        optimizer = torch.optim.AdamW(params, lr=learning_rate, weight_decay=weight_decay)
        schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, lr_factor)
        scaler = torch.amp.GradScaler("cuda") if dtype == torch.float16 else None
        return cls(optimizer, schedule, params, scaler, max_grad_norm, extra)

    def backward(self, loss: torch.Tensor) -> None:
        """Add the gradients of ``loss`` (scaled when training in float16)."""
        (self.scaler.scale(loss) if self.scaler is not None else loss).backward()

    def zero_grad(self) -> None:
        """Drop the gradients gathered since the last step."""
        self.optimizer.zero_grad(set_to_none=True)

    def step(self) -> None:
        """One optimiser step (unscaling, clipping), gradients cleared, schedule advanced."""
        import torch

        if self.scaler is not None:
            self.scaler.unscale_(self.optimizer)
        if self.max_grad_norm is not None:
            torch.nn.utils.clip_grad_norm_(self.params, self.max_grad_norm)
        if self.scaler is not None:
            self.scaler.step(self.optimizer)
            self.scaler.update()
        else:
            self.optimizer.step()
        if self.extra is not None:
            self.extra.step()
            self.extra.zero_grad(set_to_none=True)
        self.optimizer.zero_grad(set_to_none=True)
        self.schedule.step()


def free_gpu_memory() -> None:
    """Collect garbage and return PyTorch's cached GPU memory."""
    import gc

    import torch

    gc.collect()
    if torch.cuda.is_available():
        torch.cuda.empty_cache()


def halves(index: np.ndarray, halved: bool) -> list[np.ndarray]:
    """The batch itself, or its two halves after the GPU ran out of memory."""
    if not halved or len(index) < 2:
        return [index]
    middle = len(index) // 2
    return [index[:middle], index[middle:]]


def out_of_memory(size: int, batch_size: int) -> InvalidParameterError:
    """The error after a training batch of ``size`` items ran out of GPU memory twice."""
    return InvalidParameterError(
        f"the GPU ran out of memory on a batch of {size} items, and again at half that size; "
        f"lower --batch-size (now {batch_size}; batch_size in Python) or --max-length")


def eval_out_of_memory(size: int) -> InvalidParameterError:
    """The error after predicting batches of ``size`` items ran out of GPU memory twice."""
    return InvalidParameterError(
        f"the GPU ran out of memory predicting batches of {size} items, and again at half "
        "that size; lower the evaluation batch (eval_batch_size in Python) or --max-length")


def check_config(config: LoopConfig) -> None:
    """Refuse a :class:`LoopConfig` option out of range, naming it."""
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


def check_labels(labels: np.ndarray, n_classes: int, n_items: int) -> np.ndarray:
    """``labels`` as int64, checked: one in ``0 .. n_classes - 1`` per item."""
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


def train_networks(make_network: Callable[[], Network], inputs: Inputs, labels: np.ndarray,
                   n_classes: int, method: Method,
                   config: LoopConfig) -> tuple[list[Network], TrainingLog]:
    """Train ``method.n_networks`` networks on ``inputs`` with the given ``labels``.

    Each round (``method.rounds()``, 1 but for SEAL) makes fresh networks, each after
    ``torch.manual_seed`` drawn from ``config.random_state``, and trains them with AdamW for
    ``config.epochs`` epochs. A batch that runs out of GPU memory runs again in two halves
    (losses weighted by share: the same update), and so does every later batch.

    Parameters
    ----------
    make_network : returns a new, untrained :class:`Network`.
    inputs : the training items.
    labels : ndarray of shape (n_samples,)
        The given, possibly wrong, labels in ``0 .. n_classes - 1``.
    n_classes : int
    method : the method's hooks; one instance per run.
    config : LoopConfig

    Returns
    -------
    networks : list
        The last round's networks, in eval mode, on the training device.
    log : TrainingLog
    """
    import torch

    check_config(config)
    targets_all = check_labels(labels, n_classes, len(inputs))
    torch_setup()
    device = resolve_device(config.device)
    rng = np.random.default_rng(config.random_state)
    precision = autocast_dtype(device, enabled=config.bf16)
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
            steps = TrainingSteps.adamw(
                params, learning_rate=config.learning_rate, weight_decay=config.weight_decay,
                lr_factor=linear_schedule(total_steps, float(config.warmup)), dtype=precision,
                max_grad_norm=config.max_grad_norm, extra=extra)

            def run_piece(piece: np.ndarray, size: int, context: tuple[int, int], *,
                          networks: list[Any] = networks, steps: TrainingSteps = steps) -> float:
                step = Step(
                    index=piece, batch=inputs.batch(piece, device),
                    targets=torch.as_tensor(targets_all[piece], device=device),
                    networks=networks, epoch=context[0], n_epochs=config.epochs,
                    round_index=context[1], rng=rng)
                with autocast(precision):
                    out = method.loss(step)
                parts = out if isinstance(out, list) else [out]
                loss = parts[0] if len(parts) == 1 else torch.stack(parts).sum()
                share = len(piece) / size
                steps.backward(loss * (share / config.accumulate))
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
                    while True:
                        try:
                            value = sum(run_piece(piece, len(index), context)
                                        for piece in halves(index, halved))
                            break
                        except oom as error:
                            if halved or len(index) < 2:
                                raise out_of_memory(len(index), config.batch_size) from error
                        # once: this batch again in two halves, and every later batch too
                        halved = True
                        steps.zero_grad()
                        free_gpu_memory()
                    if ((position + 1) % config.accumulate == 0
                            or position + 1 == len(batches)):
                        steps.step()
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
                  device: str | None = None, multi_label: bool = False) -> np.ndarray:
    """Softmax (``multi_label``: per-class sigmoid) outputs of ``network`` on ``inputs``,
    ``(n_samples, n_classes)`` float64, in eval mode (restored after); ``device`` None keeps
    the network where it is. Out of GPU memory: once more at half the batch."""
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
                probs = (torch.sigmoid(logits.double()) if multi_label
                         else torch.softmax(logits.double(), dim=1))
                parts.append((index, probs.cpu().numpy()))

    try:
        for size in (batch_size, batch_size // 2):  # once more at half the batch size
            try:
                run(size)
                break
            except torch.cuda.OutOfMemoryError as error:
                if size < batch_size or batch_size < 2:
                    raise eval_out_of_memory(batch_size) from error
            free_gpu_memory()
    finally:
        module.train(was_training)
    if not parts:
        return np.zeros((0, 0), dtype=np.float64)
    out = np.empty((len(inputs), parts[0][1].shape[1]), dtype=np.float64)
    for index, probs in parts:
        out[index] = probs
    return out
