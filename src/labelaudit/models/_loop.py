"""The one training loop, for every learning-with-noisy-labels method and the ``finetune`` scorer.

:func:`train_networks` trains ``method.n_networks`` networks with AdamW over the batches an
:class:`Inputs` gives, asking a :class:`Method` for the loss of every batch. :class:`Inputs`
(the training items) and :class:`Network` (a representation and a classifier on it) are
protocols; :class:`LoopConfig` holds the loop's options, :class:`TrainingLog` what a run did,
:class:`Step` one batch as a method sees it. :class:`Method` itself is plain cross-entropy
training (the ``base`` method of ``labelaudit train`` and the loss of the ``finetune``
scorer). The methods differ only in their hooks; the seeding, the device handling and the
steps are the same for all of them.

The steps are defined once, here: AdamW and its learning-rate schedule, mixed precision
(the autocast dtype and the gradient scaler of float16), gradient clipping and accumulation
(:class:`TrainingSteps`), and what to do when a GPU runs out of memory. The loops whose
contract is not "one label per item" are built from them too: masked-LM pre-training
(:func:`labelaudit.models.tapt`), token classification (:class:`FinetuneTokenScorer`) and the
CRF head of the token scorers.

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
>>> LoopConfig(epochs=3).batch_size
64
>>> Method().name, Method().n_networks, Method().rounds()
('base', 1, 1)
>>> factor = linear_schedule(10, 0.2)
>>> [round(factor(step), 2) for step in range(10)]
[0.5, 1.0, 1.0, 0.88, 0.75, 0.62, 0.5, 0.38, 0.25, 0.12]
>>> linear_schedule(10, 0.0)(7)
1.0
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
from labelaudit.models._encoder import progress_bar, resolve_device, torch_setup

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
        The method's name (``--method``).
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


def linear_schedule(total_steps: int, warmup: float) -> Callable[[int], float]:
    """Learning-rate factor of each optimiser step (from 0): a linear warm-up over
    ``warmup`` of the ``total_steps`` (at least one step), reaching 1 at the end of it, then
    a linear decay to 0; 1 throughout if ``warmup`` is 0."""
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
    """The factor of transformers' ``get_linear_schedule_with_warmup``: ``step /
    warmup_steps`` during the warm-up (the first step at 0), then a linear decay to 0, also
    without warm-up. The token fine-tuning scorer trains with it (its results stay those of
    earlier versions)."""

    def factor(step: int) -> float:
        if step < warmup_steps:
            return float(step) / float(max(1, warmup_steps))
        return max(0.0, float(total_steps - step) / float(max(1, total_steps - warmup_steps)))

    return factor


def autocast_dtype(device: torch.device, *, enabled: bool = True,
                   float16: bool = True) -> torch.dtype | None:
    """The mixed-precision dtype of forward passes on ``device``: bfloat16 on CUDA GPUs
    that have it; on older GPUs float16 (which needs :class:`TrainingSteps`' gradient
    scaler), or None with ``float16=False``; None (float32) on a CPU or when not
    ``enabled``."""
    import torch

    if not enabled or device.type != "cuda":
        return None
    if torch.cuda.is_bf16_supported():
        return torch.bfloat16
    return torch.float16 if float16 else None


def autocast(dtype: torch.dtype | None) -> AbstractContextManager[Any]:
    """``torch.autocast`` on CUDA in ``dtype`` (from :func:`autocast_dtype`), or nothing
    when ``dtype`` is None."""
    import torch

    return torch.autocast("cuda", dtype=dtype) if dtype is not None else nullcontext()


@dataclass
class TrainingSteps:
    """AdamW with a learning-rate schedule, the gradient scaler of float16 autocast and
    gradient clipping: how each loop turns its losses into updates.

    Per batch: :meth:`backward` of the loss (scaled for float16), then, every
    ``accumulate`` batches, :meth:`step`: gradients unscaled, their global norm clipped to
    ``max_grad_norm``, the optimiser (and a method's own ``extra`` optimiser) stepped,
    gradients cleared, the schedule advanced. Build one with :meth:`adamw`.
    """

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
        """AdamW over ``params`` with ``torch.optim.lr_scheduler.LambdaLR(lr_factor)``
        (:func:`linear_schedule` or :func:`transformers_linear_schedule`); a gradient
        scaler when ``dtype`` is float16."""
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
    """Collect garbage and return PyTorch's cached GPU memory (after running out of it, or
    before the next fold loads a model)."""
    import gc

    import torch

    gc.collect()
    if torch.cuda.is_available():
        torch.cuda.empty_cache()


def halves(index: np.ndarray, halved: bool) -> list[np.ndarray]:
    """The batch itself, or its two halves after the GPU ran out of memory.

    Examples
    --------
    >>> [h.tolist() for h in halves(np.arange(5), True)]
    [[0, 1], [2, 3, 4]]
    """
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
    """``labels`` as int64, after checking there is one in ``0 .. n_classes - 1`` per
    item."""
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

    Each round (``method.rounds()``, 1 for all methods but SEAL) makes fresh networks with
    ``make_network()``, each after ``torch.manual_seed`` with a seed drawn from
    ``np.random.default_rng(config.random_state)``, and trains them with AdamW for
    ``config.epochs`` epochs; the loss of each batch comes from ``method.loss``.

    When a batch runs out of GPU memory, it is run again in two halves (each half's loss
    weighted by its share of the batch, so the update is the same), and so is every later
    batch; a half that still does not fit is one error naming ``--batch-size``.

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
        The hooks of the learning-with-noisy-labels method; one instance per run
        (``Method()`` itself: plain cross-entropy).
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
                """Loss and gradients of ``piece`` of a batch of ``size`` items, weighted by
                its share of the batch; returns its share of the batch's mean loss."""
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
                    try:
                        value = sum(run_piece(piece, len(index), context)
                                    for piece in halves(index, halved))
                    except oom as error:
                        if halved or len(index) < 2:
                            raise out_of_memory(len(index), config.batch_size) from error
                        # once: this batch again in two halves, and every later batch too
                        halved = True
                        steps.zero_grad()
                        free_gpu_memory()
                        try:
                            value = sum(run_piece(piece, len(index), context)
                                        for piece in halves(index, halved))
                        except oom as again:
                            raise out_of_memory(len(index), config.batch_size) from again
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
    """Softmax outputs of ``network`` on ``inputs``, shape ``(n_samples, n_classes)``
    (with ``multi_label``, one sigmoid per class: each class's own probability).

    Runs in eval mode without gradients, rows in input order, as float64. ``device`` None
    keeps the network where it is; otherwise the network moves to ``device``. The
    network's train/eval mode is restored afterwards. A batch that runs out of GPU memory
    is tried once more at half the size.
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
                probs = (torch.sigmoid(logits.double()) if multi_label
                         else torch.softmax(logits.double(), dim=1))
                parts.append((index, probs.cpu().numpy()))

    try:
        try:
            run(batch_size)
        except torch.cuda.OutOfMemoryError as error:
            if batch_size < 2:
                raise eval_out_of_memory(batch_size) from error
            free_gpu_memory()  # once more at half the batch size
            try:
                run(batch_size // 2)
            except torch.cuda.OutOfMemoryError as again:
                raise eval_out_of_memory(batch_size) from again
    finally:
        module.train(was_training)
    if not parts:
        return np.zeros((0, 0), dtype=np.float64)
    out = np.empty((len(inputs), parts[0][1].shape[1]), dtype=np.float64)
    for index, probs in parts:
        out[index] = probs
    return out
